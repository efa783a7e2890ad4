import { newQuickJSWASMModuleFromVariant } from 'quickjs-emscripten-core';
import variant from '@jitl/quickjs-ng-wasmfile-release-sync';
import v2 from '@jitl/quickjs-wasmfile-release-sync';
for (const [name, v] of [['ng', variant], ['bellard', v2]]) {
const mod = await newQuickJSWASMModuleFromVariant(v);
function run(code, limit=-1) {
  const rt = mod.newRuntime(); rt.setMemoryLimit(limit); const ctx = rt.newContext();
  const t=performance.now(); let calls=0;
  rt.setInterruptHandler(() => { calls++; return false; });
  const r = ctx.evalCode(code, 'cell.js', {type:'global'});
  console.log(name, code.slice(0,70), limit, (performance.now()-t).toFixed(0)+'ms', calls, r.error ? ctx.dump(r.error).message : 'ok');
  (r.error??r.value).dispose(); ctx.dispose(); rt.dispose();
}
run('const a=[]; for (let i=0;i<20;i++) a.push("x".repeat(1<<20))');
run('const a=[]; for (let i=0;i<20;i++) a.push("x".repeat(1<<20))', 64<<20);
run('const a=[]; for (let i=0;i<20;i++) a.push(new Array(1e5).fill(1))');
run('const a=[]; while(true) a.push("x".repeat(1<<20))', 32<<20);
}
