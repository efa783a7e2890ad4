/** The timeline's HTML shell, served at `/`. It holds no data: everything comes from the API. */
export const TIMELINE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Factum timeline</title>
<link rel="stylesheet" href="/assets/timeline.css">
<script src="/assets/timeline.js" defer></script>
</head>
<body>
<div class="topbar">
  <span class="brand">Factum<small>timeline</small></span>
  <span id="live" class="live">offline</span>
  <span class="spacer"></span>
  <button id="sign-out" class="hidden" type="button">Forget token</button>
</div>

<section id="login" class="login hidden">
  <h1>Connect to this server</h1>
  <p>Open the login URL <code>factum serve</code> printed, or paste the token it printed when it first started. It is kept in this tab only.</p>
  <form id="login-form">
    <input id="token" type="password" autocomplete="off" placeholder="Server token" aria-label="Server token" required>
    <button class="primary" type="submit">Open</button>
  </form>
  <div id="login-error" class="error-text" role="alert"></div>
</section>

<div id="app" class="layout hidden">
  <nav class="sidebar">
    <div class="head"><h2>Sessions</h2><button id="new-session" type="button">New</button></div>
    <div id="sessions"></div>
  </nav>
  <main class="main" id="main">
    <div class="session-head">
      <h1><span id="session-title">Select a session</span><span id="session-status"></span></h1>
      <div class="legend">
        <span><span class="badge t1">T1</span> dispatched</span>
        <span><span class="badge t2">T2</span> settled, on the same card</span>
        <span><span class="badge warn">uncertain</span> dispatched, never settled</span>
        <span><span class="badge bad">rejected</span> did not run</span>
      </div>
      <form id="new-form" class="new-form hidden" aria-label="New session">
        <h2>New session</h2>
        <label>Session id <input id="new-session-id" required maxlength="256" aria-label="Session id"></label>
        <textarea id="new-message" required placeholder="First message" aria-label="First message"></textarea>
        <div class="actions"><button class="primary" type="submit">Start session</button><button id="new-cancel" type="button">Cancel</button></div>
        <div id="new-error" class="error-text" role="alert"></div>
      </form>
      <form id="compose" class="compose hidden">
        <textarea id="message" placeholder="Message for a new turn in this session" aria-label="Message"></textarea>
        <button id="send" class="primary" type="submit">Send</button>
      </form>
      <div id="compose-reason" class="compose-reason hidden" role="status"></div>
      <div id="notice" class="notice" role="status"></div>
      <button id="replay" class="hidden" type="button" title="Replay this session with the recorded answers and results: nothing runs, nothing is written">Verify replay</button>
    </div>
    <section id="replay-report" class="replay hidden" aria-label="Replay report"></section>
    <div id="timeline" class="timeline"><div class="empty">Choose a session on the left.</div></div>
  </main>
</div>
</body>
</html>
`;
