/** The timeline's stylesheet, served as `/assets/timeline.css`. */
export const TIMELINE_STYLE = `
:root {
  --bg: #f5f6f8; --panel: #ffffff; --line: #e2e5ea; --text: #1c2230; --muted: #687082;
  --accent: #2457d6; --ok: #177245; --ok-bg: #eaf7ef; --bad: #b42318; --bad-bg: #fdf0ef; --bad-line: #f3b8b2;
  --warn: #9a5b00; --warn-bg: #fff8e6; --warn-line: #f0b429; --pause: #5b3cc4; --pause-bg: #f2efff;
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace;
  --sans: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
}
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; }
body { font: 14px/1.45 var(--sans); color: var(--text); background: var(--bg); }
button { font: inherit; cursor: pointer; border-radius: 6px; border: 1px solid var(--line); background: var(--panel); padding: 5px 12px; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.danger { color: var(--bad); border-color: var(--bad-line); }
button:disabled { opacity: .5; cursor: default; }
input, textarea { font: inherit; border: 1px solid var(--line); border-radius: 6px; padding: 7px 10px; background: #fff; color: var(--text); }
code, pre, .mono { font-family: var(--mono); font-size: 12.5px; }
pre { margin: 6px 0 0; white-space: pre-wrap; word-break: break-word; }
.hidden { display: none !important; }

.topbar { height: 48px; display: flex; align-items: center; gap: 14px; padding: 0 18px; background: #151b2b; color: #e8ebf2; }
.topbar .brand { font-weight: 700; letter-spacing: .02em; }
.topbar .brand small { font-weight: 400; color: #9aa3b8; margin-left: 8px; }
.topbar .spacer { flex: 1; }
.topbar button { background: transparent; color: #c9cfdc; border-color: #39415a; }
.live { display: inline-flex; align-items: center; gap: 6px; font-size: 12px; color: #9aa3b8; }
.live::before { content: ""; width: 8px; height: 8px; border-radius: 50%; background: #6b7280; }
.live.on::before { background: #34d399; box-shadow: 0 0 0 3px rgba(52, 211, 153, .25); }
.live.retry::before { background: var(--warn-line); }

.login { max-width: 420px; margin: 12vh auto; background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 28px; }
.login h1 { font-size: 18px; margin: 0 0 6px; }
.login p { color: var(--muted); margin: 0 0 18px; }
.login form { display: flex; gap: 8px; }
.login input { flex: 1; }
.error-text { color: var(--bad); margin-top: 10px; min-height: 1.4em; }

.layout { display: grid; grid-template-columns: 300px 1fr; height: calc(100% - 48px); }
.sidebar { border-right: 1px solid var(--line); background: var(--panel); overflow-y: auto; }
.sidebar .head { display: flex; align-items: center; justify-content: space-between; padding: 14px 14px 8px; }
.sidebar h2 { font-size: 12px; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); margin: 0; }
.session { display: block; width: 100%; text-align: left; border: 0; border-radius: 0; border-left: 3px solid transparent; padding: 10px 14px; border-bottom: 1px solid var(--line); background: none; }
.session:hover { background: #f8f9fb; }
.session.selected { background: #eef3ff; border-left-color: var(--accent); }
.session .id { font-family: var(--mono); font-size: 12px; color: var(--muted); }
.session .title { display: block; margin: 2px 0 4px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.session .counts { display: flex; flex-wrap: wrap; gap: 2px 10px; font-size: 12px; color: var(--muted); }
.session .counts span { white-space: nowrap; }
.session .counts .warn { color: var(--warn); font-weight: 600; }
.session .counts .bad { color: var(--bad); font-weight: 600; }
.empty { color: var(--muted); padding: 24px; text-align: center; }

.main { overflow-y: auto; }
.session-head { position: sticky; top: 0; z-index: 2; background: var(--bg); box-shadow: 0 1px 0 rgba(20, 27, 43, .04); border-bottom: 1px solid var(--line); padding: 12px 24px; }
.session-head h1 { font-size: 16px; margin: 0; display: flex; align-items: center; gap: 10px; }
.legend { display: flex; gap: 12px; flex-wrap: wrap; margin-top: 6px; font-size: 12px; color: var(--muted); }
.compose { display: flex; gap: 8px; margin-top: 10px; }
.compose textarea { flex: 1; resize: vertical; min-height: 38px; height: 38px; }
.notice { font-size: 13px; margin-top: 6px; color: var(--bad); min-height: 0; }
.timeline { padding: 16px 24px 60px; max-width: 1100px; }

.badge { display: inline-block; font-size: 11px; font-weight: 600; letter-spacing: .02em; padding: 1px 7px; border-radius: 999px; background: #eceef2; color: #3d4455; white-space: nowrap; }
.badge.running, .badge.open { background: #e6efff; color: var(--accent); }
.badge.completed { background: var(--ok-bg); color: var(--ok); }
.badge.failed { background: var(--bad-bg); color: var(--bad); }
.badge.cancelled { background: #eceef2; color: #4b5365; }
.badge.paused { background: var(--pause-bg); color: var(--pause); }
.badge.t1 { background: #e6efff; color: var(--accent); }
.badge.t2 { background: var(--ok-bg); color: var(--ok); }
.badge.warn { background: var(--warn-bg); color: var(--warn); }
.badge.bad { background: var(--bad-bg); color: var(--bad); }

.invocation { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; margin-bottom: 18px; overflow: hidden; }
.invocation > header { display: flex; align-items: center; gap: 10px; padding: 10px 14px; border-bottom: 1px solid var(--line); background: #fafbfc; }
.invocation > header .meta { color: var(--muted); font-size: 12px; }
.invocation > header .spacer { flex: 1; }

.row { display: grid; grid-template-columns: 92px 1fr; gap: 10px; padding: 7px 14px; border-bottom: 1px solid #f0f1f4; }
.row:last-child { border-bottom: 0; }
.gutter { font-family: var(--mono); font-size: 11.5px; color: var(--muted); line-height: 1.3; padding-top: 2px; }
.gutter .seq { color: var(--text); font-weight: 600; }
.line { display: flex; align-items: baseline; gap: 8px; flex-wrap: wrap; }
.kind { font-family: var(--mono); font-size: 11.5px; color: var(--muted); }
.row.quiet { padding-top: 3px; padding-bottom: 3px; }
.row.quiet .line { color: var(--muted); font-size: 12.5px; }
.row.stream .text { white-space: pre-wrap; margin-top: 4px; font-size: 14.5px; }
.row.stream .reasoning { white-space: pre-wrap; color: var(--muted); font-style: italic; margin-top: 4px; }
.row.stream.streaming .text::after { content: "▍"; color: var(--accent); animation: blink 1s steps(1) infinite; }
@keyframes blink { 50% { opacity: 0; } }

.op { margin: 2px 0; border: 1px solid var(--line); border-radius: 8px; overflow: hidden; }
.op .dispatch, .op .settlement { padding: 7px 10px; }
.op .settlement { border-top: 1px solid var(--line); display: flex; align-items: baseline; gap: 8px; flex-wrap: wrap; }
.op .tool { font-family: var(--mono); font-weight: 600; }
.op .notes { font-size: 12.5px; color: var(--muted); margin-top: 4px; }
.op.settled .settlement { background: var(--ok-bg); }
.op.failed { border-color: var(--bad-line); }
.op.failed .settlement { background: var(--bad-bg); color: var(--bad); }
.op.uncertain { border: 2px solid var(--warn-line); background: var(--warn-bg); }
.op.uncertain .settlement { background: #fff1c7; color: var(--warn); font-weight: 600; }
.op.in-flight { border-style: dashed; border-color: var(--warn-line); }
.op.in-flight .settlement { color: var(--warn); }
.row.rejected { background: var(--bad-bg); box-shadow: inset 3px 0 0 var(--bad); }
.row.rejected .why { color: var(--bad); font-weight: 600; }
.row.ended.failed { background: var(--bad-bg); }
.row.ended.paused { background: var(--pause-bg); }
.row.ended.completed { background: var(--ok-bg); }
.json { color: #384057; max-height: 160px; overflow: auto; }
.op .result { max-height: 420px; margin: 0; padding: 8px 10px; border-top: 1px solid var(--line); background: #fbfcfd; }
button.link { border: 0; background: none; color: var(--accent); padding: 0 4px; font-size: 12.5px; }
.compose-reason { margin-top: 8px; padding: 8px 10px; border-radius: 6px; background: var(--warn-bg); color: var(--warn); border: 1px solid var(--warn-line); font-size: 13px; }
.new-form { display: grid; gap: 8px; margin-top: 10px; padding: 12px; border: 1px solid var(--line); border-radius: 8px; background: #fafbfc; max-width: 720px; }
.new-form h2 { font-size: 14px; margin: 0; }
.new-form label { display: flex; gap: 8px; align-items: center; font-size: 13px; color: var(--muted); }
.new-form textarea { min-height: 70px; }
.new-form .actions { display: flex; gap: 8px; }
.approval { margin: 2px 0; border: 2px solid var(--warn-line); border-radius: 8px; background: var(--warn-bg); padding: 7px 10px; }
.approval.approved { border: 1px solid var(--line); background: var(--ok-bg); }
.approval.denied, .approval.expired { border: 1px solid var(--bad-line); background: var(--bad-bg); }
.approval .tool { font-family: var(--mono); font-weight: 600; }
.approval .why { margin-top: 4px; font-weight: 600; color: var(--warn); }
.approval-actions, .approval-decided, .resolve { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin-top: 6px; }
.approval-actions input, .resolve input { flex: 1; min-width: 180px; }
.resolve { padding: 7px 10px; border-top: 1px solid var(--warn-line); }
.badge.awaiting_approval { background: var(--warn-bg); color: var(--warn); }
.row.ended.awaiting_approval { background: var(--warn-bg); }
.replay { margin: 12px 0; padding: 12px; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; }
.replay-summary { font-weight: 600; margin-bottom: 8px; }
.replay-invocation { padding: 6px 0; border-top: 1px solid var(--line); }
.replay-invocation .muted { color: var(--muted); }
.replay-where { margin: 6px 0 4px; color: var(--bad); font-weight: 600; }
.replay-sides { display: grid; grid-template-columns: 1fr 1fr; gap: 10px; }
.replay-side { min-width: 0; background: var(--bg); border-radius: 6px; padding: 6px 8px; }
.replay-label { font-size: 12px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
`;
