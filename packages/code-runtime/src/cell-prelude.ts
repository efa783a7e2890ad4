/**
 * JavaScript evaluated in every fresh context before the cell, as a function
 * called with the host functions and the tool names. Everything the cell can
 * reach of the host is built here from those captured functions, so no host
 * function is ever a property of the global object, and code generation from
 * strings (`eval`, `Function` and its async/generator siblings) is removed.
 */
export const CELL_PRELUDE = `(function (host, toolNames) {
  'use strict';
  const call = host.call, hostText = host.text, hostLog = host.log, hostNotify = host.notify;
  const sleep = host.sleep, cancelSleep = host.cancelSleep;
  const stringify = JSON.stringify, parse = JSON.parse, toText = String;
  const defineProperty = Object.defineProperty, freeze = Object.freeze, getPrototypeOf = Object.getPrototypeOf;
  const show = (value) => {
    if (typeof value === 'string') return value;
    try {
      const json = stringify(value);
      if (json !== undefined) return json;
    } catch {}
    return toText(value);
  };
  const noCodeFromStrings = function () {
    throw new EvalError('code generation from strings is not available in a cell');
  };
  noCodeFromStrings.prototype = Function.prototype;
  for (const prototype of [
    Function.prototype,
    getPrototypeOf(async function () {}),
    getPrototypeOf(function* () {}),
    getPrototypeOf(async function* () {}),
  ]) {
    defineProperty(prototype, 'constructor', { value: noCodeFromStrings, writable: false, configurable: false });
  }
  delete globalThis.eval;
  const tools = Object.create(null);
  for (const name of toolNames) {
    const invoke = async (input) => {
      const json = input === undefined ? 'null' : stringify(input);
      if (typeof json !== 'string') throw new TypeError('tools.' + name + ': the input must be JSON-serialisable');
      const output = await call(name, json);
      return output === undefined ? undefined : parse(output);
    };
    defineProperty(tools, name, { value: invoke, enumerable: true });
  }
  freeze(tools);
  const timers = new Map();
  let nextTimer = 1;
  const setTimeout = function (callback, ms, ...args) {
    if (typeof callback !== 'function') throw new TypeError('setTimeout: the callback must be a function');
    const id = nextTimer++;
    const delay = +ms > 0 ? +ms : 0;
    timers.set(id, true);
    sleep(id, delay).then(() => {
      if (timers.delete(id)) callback(...args);
    });
    return id;
  };
  const clearTimeout = function (id) {
    if (timers.delete(id)) cancelSleep(id);
  };
  const line = (level) => (...values) => {
    hostLog(level, values.map(show).join(' '));
  };
  const console = freeze({ log: line('log'), info: line('info'), warn: line('warn'), error: line('error') });
  const globals = {
    Function: noCodeFromStrings,
    tools,
    text: (value) => { hostText(show(value)); },
    notify: (message) => { hostNotify(show(message)); },
    console,
    setTimeout,
    clearTimeout,
  };
  for (const key of Object.keys(globals)) {
    defineProperty(globalThis, key, { value: globals[key], writable: false, configurable: false, enumerable: false });
  }
})`;
