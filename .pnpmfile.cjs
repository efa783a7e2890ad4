// better-sqlite3 compiles from source here; node-gyp must find the headers of the
// `node` that runs the install, and pnpm passes install scripts only an allowlist of
// environment variables, so the folder is handed over explicitly.
const path = require('node:path');
const fs = require('node:fs');

function nodeDir() {
  const prefix = path.dirname(path.dirname(process.execPath));
  return fs.existsSync(path.join(prefix, 'include', 'node', 'node.h')) ? prefix : undefined;
}

module.exports = {
  hooks: {
    updateConfig(config) {
      const dir = nodeDir();
      if (dir) config.extraEnv = { ...(config.extraEnv ?? {}), npm_config_nodedir: dir };
      return config;
    },
  },
};
