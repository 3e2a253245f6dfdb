'use strict';
// The boardgame.io server of the bench: `node server.js --port P [--storage memory|flatfile] [--dir D]`.
// In memory by default; `--storage flatfile` keeps matches in node-persist files under `--dir` (no
// fsync: boardgame.io's FlatFile writes the files and moves on). Prints one JSON line once it
// listens: {"ready": true, "pid": ..., "port": ..., "storage": ...}.

const { Server, FlatFile } = require('boardgame.io/server');
const { SkullKingShape } = require('./game');

function options(argv) {
  const found = { port: 0, storage: 'memory', dir: null };
  for (let i = 0; i < argv.length; i += 2) {
    const [name, value] = [argv[i], argv[i + 1]];
    if (name === '--port') found.port = Number(value);
    else if (name === '--storage') found.storage = value;
    else if (name === '--dir') found.dir = value;
    else throw new Error(`unknown argument ${name}`);
  }
  if (!found.port) throw new Error('--port is required');
  if (!['memory', 'flatfile'].includes(found.storage)) throw new Error(`unknown storage ${found.storage}`);
  if (found.storage === 'flatfile' && !found.dir) throw new Error('--storage flatfile needs --dir');
  return found;
}

async function main() {
  const opts = options(process.argv.slice(2));
  const db = opts.storage === 'flatfile' ? new FlatFile({ dir: opts.dir, logging: false }) : undefined;
  const server = Server({ games: [SkullKingShape], db, origins: [] });
  await server.run({ port: opts.port });
  process.stdout.write(
    `${JSON.stringify({ ready: true, pid: process.pid, port: opts.port, storage: opts.storage })}\n`,
  );
  const stop = () => process.exit(0);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
