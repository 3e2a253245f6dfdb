'use strict';
// A game with Skull King's shape for boardgame.io 0.50: four seats; round r deals r cards from a
// 66-card deck (four suits of 13, black the trump; escapes, pirates, mermaids, a tigress and the
// Skull King); every seat bids at once (hidden until all have bid); tricks are played in turn with
// follow-suit, the winner leads the next; each round is scored, ten rounds. Hands and unrevealed
// bids are secret: `playerView` redacts them, so the server computes each seat's own state, as
// Tablestream's projection does. Every move runs on the server only (`client: false`).

const { INVALID_MOVE, ActivePlayers } = require('boardgame.io/core');

const NAME = 'skull-king-shape';
const PLAYERS = 4;
const ROUNDS = 10;
const SUITS = ['yellow', 'red', 'blue', 'black'];
const TRUMP = 'black';

function deck() {
  const cards = [];
  for (const suit of SUITS) for (let rank = 1; rank <= 13; rank += 1) cards.push(`${suit}-${rank}`);
  for (let i = 1; i <= 5; i += 1) cards.push(`escape-${i}`, `pirate-${i}`);
  cards.push('mermaid-1', 'mermaid-2', 'tigress', 'skull-king');
  return cards;
}

const DECK = deck();

function kind(card, declared) {
  if (card === 'tigress') return declared || 'pirate';
  const head = card.split('-')[0];
  if (SUITS.includes(head)) return 'number';
  return head === 'skull' ? 'skull-king' : head;
}

function suitOf(card) {
  const head = card.split('-')[0];
  return SUITS.includes(head) ? head : null;
}

function rankOf(card) {
  return Number(card.split('-')[1]) || 0;
}

function leadSuit(trick) {
  for (const play of trick) {
    if (kind(play.card, play.as) === 'number') return suitOf(play.card);
  }
  return null;
}

// The cards of `hand` that may go to `trick`: specials always; a number follows the lead suit
// when the hand holds one.
function playable(hand, trick) {
  const suit = leadSuit(trick);
  const holds = suit !== null && hand.some((card) => suitOf(card) === suit);
  return hand.filter((card) => kind(card) !== 'number' || !holds || suitOf(card) === suit);
}

// The index in `trick` of the play that takes it, and the bonus it earns.
function winner(trick) {
  const kinds = trick.map((play) => kind(play.card, play.as));
  const first = (name) => kinds.indexOf(name);
  const king = first('skull-king');
  const mermaid = first('mermaid');
  const pirate = first('pirate');
  if (king >= 0 && mermaid >= 0) return { index: mermaid, bonus: 50 };
  if (king >= 0) return { index: king, bonus: 30 * kinds.filter((k) => k === 'pirate').length };
  if (pirate >= 0) return { index: pirate, bonus: 0 };
  if (mermaid >= 0) return { index: mermaid, bonus: 0 };
  const highest = (suit) => {
    let best = -1;
    trick.forEach((play, i) => {
      if (kinds[i] === 'number' && suitOf(play.card) === suit) {
        if (best < 0 || rankOf(play.card) > rankOf(trick[best].card)) best = i;
      }
    });
    return best;
  };
  const trump = highest(TRUMP);
  if (trump >= 0) return { index: trump, bonus: 0 };
  const lead = leadSuit(trick);
  if (lead !== null) return { index: highest(lead), bonus: 0 };
  return { index: 0, bonus: 0 }; // all escapes: the first one played
}

function score(bid, tricks, bonus, round) {
  if (bid === 0) return tricks === 0 ? 10 * round : -10 * round;
  if (tricks !== bid) return -10 * Math.abs(tricks - bid);
  return 20 * tricks + bonus;
}

function deal({ G, random }) {
  if (G.over) return;
  G.round += 1;
  const cards = random.Shuffle(DECK);
  for (let seat = 0; seat < PLAYERS; seat += 1) {
    G.hands[seat] = cards.slice(seat * G.round, (seat + 1) * G.round);
  }
  G.bids = Array(PLAYERS).fill(null);
  G.tricks = Array(PLAYERS).fill(0);
  G.bonus = Array(PLAYERS).fill(0);
  G.trick = [];
  G.leader = (G.round - 1) % PLAYERS;
}

function bid({ G, playerID }, amount) {
  const seat = Number(playerID);
  if (G.bids[seat] !== null || !Number.isInteger(amount) || amount < 0 || amount > G.round) {
    return INVALID_MOVE;
  }
  G.bids[seat] = amount;
  G.moves += 1;
}

function play({ G, playerID }, card, declared) {
  const seat = Number(playerID);
  const hand = G.hands[seat];
  if (!playable(hand, G.trick).includes(card)) return INVALID_MOVE;
  if (card === 'tigress' && declared !== 'pirate' && declared !== 'escape') return INVALID_MOVE;
  hand.splice(hand.indexOf(card), 1);
  G.trick.push(card === 'tigress' ? { seat, card, as: declared } : { seat, card });
  G.moves += 1;
  if (G.trick.length < PLAYERS) return;
  const taken = winner(G.trick);
  const by = G.trick[taken.index].seat;
  G.tricks[by] += 1;
  G.bonus[by] += taken.bonus;
  G.lastTrick = G.trick;
  G.trick = [];
  G.leader = by;
  if (hand.length > 0) return;
  for (let s = 0; s < PLAYERS; s += 1) {
    G.scores[s] += score(G.bids[s], G.tricks[s], G.bids[s] === G.tricks[s] ? G.bonus[s] : 0, G.round);
  }
  G.lastRound = { bids: G.bids, tricks: G.tricks };
  G.bids = Array(PLAYERS).fill(null); // before the bid phase's endIf first looks at them
  if (G.round >= ROUNDS) G.over = true;
}

const SkullKingShape = {
  name: NAME,
  minPlayers: PLAYERS,
  maxPlayers: PLAYERS,

  setup: () => ({
    round: 0,
    hands: Array.from({ length: PLAYERS }, () => []),
    bids: Array(PLAYERS).fill(null),
    tricks: Array(PLAYERS).fill(0),
    bonus: Array(PLAYERS).fill(0),
    trick: [],
    lastTrick: [],
    lastRound: null,
    leader: 0,
    scores: Array(PLAYERS).fill(0),
    moves: 0, // moves accepted: what the bench counts
    over: false,
  }),

  phases: {
    bid: {
      start: true,
      onBegin: deal,
      turn: { activePlayers: ActivePlayers.ALL_ONCE },
      // bids are simultaneous: a bid sent on a state another seat's bid just replaced still counts
      moves: { bid: { move: bid, client: false, ignoreStaleStateID: true } },
      endIf: ({ G }) => G.bids.every((b) => b !== null),
      next: 'play',
    },
    play: {
      turn: {
        order: {
          first: ({ G }) => G.leader,
          next: ({ G, ctx }) => (G.trick.length === 0 ? G.leader : (ctx.playOrderPos + 1) % ctx.numPlayers),
        },
        minMoves: 1,
        maxMoves: 1,
      },
      moves: { play: { move: play, client: false } },
      endIf: ({ G }) => G.hands.every((hand) => hand.length === 0),
      next: 'bid',
    },
  },

  endIf: ({ G }) => (G.over ? { scores: G.scores } : undefined),

  // Each seat sees its own hand, the others' hand sizes, and the bids once everyone has bid.
  playerView: ({ G, ctx, playerID }) => {
    const seat = playerID === null || playerID === undefined ? -1 : Number(playerID);
    const hidden = ctx.phase === 'bid';
    return {
      ...G,
      hands: G.hands.map((hand, s) => (s === seat ? hand : hand.length)),
      bids: G.bids.map((b, s) => (s === seat || !hidden ? b : b === null ? null : 'placed')),
    };
  },
};

// A legal move of `seat` in the seat's own view, chosen by `rng` (a function to [0, 1)), or null
// when the seat has nothing to do: `{ move, args }`.
function randomMove(state, seat, rng) {
  const { G, ctx } = state;
  if (ctx.gameover) return null;
  const id = String(seat);
  if (ctx.phase === 'bid') {
    if (!ctx.activePlayers || !(id in ctx.activePlayers) || G.bids[seat] !== null) return null;
    return { move: 'bid', args: [Math.floor(rng() * (G.round + 1))] };
  }
  if (ctx.phase !== 'play' || ctx.currentPlayer !== id) return null;
  const cards = playable(G.hands[seat], G.trick);
  if (cards.length === 0) return null;
  const card = cards[Math.floor(rng() * cards.length)];
  return card === 'tigress'
    ? { move: 'play', args: [card, rng() < 0.5 ? 'pirate' : 'escape'] }
    : { move: 'play', args: [card] };
}

module.exports = { SkullKingShape, NAME, PLAYERS, ROUNDS, DECK, playable, winner, score, randomMove };
