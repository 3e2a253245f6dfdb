'use strict';
// The bench's boardgame.io players: `node client.js --server http://127.0.0.1:P --tables N
// [--seconds S | --moves M] [--seed K] [--wait-go]`.
//
// Each table is a match made with the lobby API (create, then four joins), played by four
// boardgame.io clients (`Client` with the `SocketIO` transport, each on its own socket). Every seat
// whose turn it is plays a random legal move as soon as its state says so. A finished match is
// replaced by a new one while the run lasts. Output, one JSON line each:
//   {"ready": true, ...}   every table connected and synced (with --wait-go: then wait for "go" on stdin)
//   {"summary": true, "moves": ..., "elapsed": ..., ...}   at the end
// "moves" counts the moves the server accepted (each match's own counter, G.moves, as its seats
// last saw it); "sent" the moves the seats sent (the server refuses none in a sound run: bids are
// simultaneous and taken whatever state they were sent on, each seat bids once a round, and a play
// is only sent by the seat whose turn it is).

const { Client } = require('boardgame.io/client');
const { SocketIO } = require('boardgame.io/multiplayer');
const { SkullKingShape, NAME, PLAYERS, randomMove } = require('./game');

const SETTLE_MS = 30000; // after the run: until every move sent came back in a state, or this long
const READY_MS = 120000;

function options(argv) {
  const found = { server: null, tables: 1, seconds: 0, moves: 0, seed: 1, waitGo: false };
  for (let i = 0; i < argv.length; i += 1) {
    const name = argv[i];
    if (name === '--wait-go') {
      found.waitGo = true;
      continue;
    }
    const value = argv[(i += 1)];
    if (name === '--server') found.server = value;
    else if (name === '--tables') found.tables = Number(value);
    else if (name === '--seconds') found.seconds = Number(value);
    else if (name === '--moves') found.moves = Number(value);
    else if (name === '--seed') found.seed = Number(value);
    else throw new Error(`unknown argument ${name}`);
  }
  if (!found.server) throw new Error('--server is required');
  if (!found.seconds && !found.moves) throw new Error('--seconds or --moves is required');
  return found;
}

// mulberry32: a small seeded generator, so a run's choices repeat with its seed.
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function post(server, path, body) {
  const reply = await fetch(`${server}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!reply.ok) throw new Error(`POST ${path}: ${reply.status} ${await reply.text()}`);
  return reply.json();
}

class Run {
  constructor(opts) {
    this.opts = opts;
    this.rng = generator(opts.seed);
    this.playing = false;
    this.tables = [];
    this.finishedMoves = 0;
    this.finishedGames = 0;
    this.sent = 0;
    this.updates = 0;
    this.setupRequests = 0;
    this.lastUpdate = 0;
  }

  get accepted() {
    return this.finishedMoves + this.tables.reduce((sum, table) => sum + table.moves, 0);
  }

  async newTable() {
    const { matchID } = await post(this.opts.server, `/games/${NAME}/create`, { numPlayers: PLAYERS });
    const table = { matchID, moves: 0, sent: 0, seats: [], synced: 0, over: false };
    for (let seat = 0; seat < PLAYERS; seat += 1) {
      const joined = await post(this.opts.server, `/games/${NAME}/${matchID}/join`, {
        playerID: String(seat),
        playerName: `P${seat}`,
      });
      table.seats.push({ seat, credentials: joined.playerCredentials, acted: -1, bidRound: 0, synced: false });
    }
    this.setupRequests += 1 + PLAYERS;
    this.tables.push(table);
    for (const seat of table.seats) this.connect(table, seat);
    return table;
  }

  connect(table, seat) {
    seat.client = Client({
      game: SkullKingShape,
      numPlayers: PLAYERS,
      multiplayer: SocketIO({
        server: this.opts.server,
        socketOpts: { forceNew: true, transports: ['websocket'] }, // one socket per seat, as players have
      }),
      matchID: table.matchID,
      playerID: String(seat.seat),
      credentials: seat.credentials,
      debug: false,
    });
    seat.client.subscribe((state) => this.seen(table, seat, state));
    seat.client.start();
  }

  seen(table, seat, state) {
    if (state === null || table.over) return;
    this.updates += 1;
    this.lastUpdate = performance.now();
    if (!seat.synced) {
      seat.synced = true;
      table.synced += 1;
    }
    table.moves = Math.max(table.moves, state.G.moves);
    if (state.ctx.gameover) this.finish(table);
    else this.act(table, seat, state);
  }

  // A seat acts at most once per state it sees, and bids once a round (its bid may still be on
  // its way while other seats' bids come back).
  act(table, seat, state) {
    if (!this.playing || state === null || state._stateID <= seat.acted) return;
    const chosen = randomMove(state, seat.seat, this.rng);
    if (chosen === null || (chosen.move === 'bid' && seat.bidRound === state.G.round)) return;
    if (chosen.move === 'bid') seat.bidRound = state.G.round;
    seat.acted = state._stateID;
    this.sent += 1;
    table.sent += 1;
    seat.client.moves[chosen.move](...chosen.args);
  }

  finish(table) {
    table.over = true;
    this.finishedGames += 1;
    this.finishedMoves += table.moves;
    this.tables.splice(this.tables.indexOf(table), 1);
    setImmediate(() => table.seats.forEach((seat) => seat.client.stop()));
    if (this.playing) {
      this.newTable().catch((err) => this.fail(err)); // its seats play from their first state on
    }
  }

  fail(err) {
    process.stderr.write(`${err.stack || err}\n`);
    process.exit(1);
  }

  waitFor(condition, ms, what) {
    return new Promise((resolve, reject) => {
      const deadline = performance.now() + ms;
      const tick = () => {
        if (condition()) resolve();
        else if (performance.now() > deadline) reject(new Error(`timed out waiting for ${what}`));
        else setTimeout(tick, 10);
      };
      tick();
    });
  }
}

function line(text) {
  process.stdout.write(`${JSON.stringify(text)}\n`);
}

function goLine() {
  return new Promise((resolve) => {
    let buffer = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk) => {
      buffer += chunk;
      if (buffer.includes('\n')) resolve(buffer.trim());
    });
    process.stdin.on('end', () => resolve(buffer.trim()));
  });
}

async function main() {
  const opts = options(process.argv.slice(2));
  const run = new Run(opts);
  const setupStarted = performance.now();
  for (let i = 0; i < opts.tables; i += 1) await run.newTable();
  await run.waitFor(() => run.tables.every((t) => t.synced === PLAYERS), READY_MS, 'every seat synced');
  line({ ready: true, tables: opts.tables, seats: opts.tables * PLAYERS, setup_s: (performance.now() - setupStarted) / 1000 });
  if (opts.waitGo && (await goLine()) !== 'go') throw new Error('expected "go" on stdin');

  const started = performance.now();
  run.lastUpdate = started;
  run.playing = true;
  run.setupRequests = 0;
  for (const table of run.tables) for (const seat of table.seats) run.act(table, seat, seat.client.getState());
  const played = () => (opts.moves ? run.accepted >= opts.moves : performance.now() - started >= opts.seconds * 1000);
  await run.waitFor(played, Math.max(opts.seconds * 1000, 1) + 600000, 'the end of the run');
  run.playing = false;
  const stopped = performance.now();
  // settled: every match's counter reached the moves its seats sent (a finished match left the list)
  await run.waitFor(() => run.tables.every((t) => t.moves >= t.sent), SETTLE_MS, 'the server to settle').catch(() => {});
  const end = Math.max(stopped, Math.min(run.lastUpdate, performance.now()));
  line({
    summary: true,
    tables: opts.tables,
    moves: run.accepted,
    sent: run.sent,
    updates: run.updates,
    finished_games: run.finishedGames,
    setup_requests: run.setupRequests,
    elapsed: (end - started) / 1000,
  });
  for (const table of run.tables) for (const seat of table.seats) seat.client.stop();
  process.exit(0);
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
