// Checks of a history this browser makes itself, trusting neither the page nor the server's word:
// the export's hash chain link by link, every revealed seed against its commitment (WebCrypto
// SHA-256), and its head against the public transparency log - a checkpoint signed with the
// service's published key (WebCrypto Ed25519), and the RFC 9162 inclusion proof of the head's
// leaf (docs/fairness.md, "Transparency log"). A history handed to one player that differs from
// the one the service logged (a fork) has a head the log does not hold.

const CHAIN_LENGTH = 64;
const LEAF_LABEL = "tablestream-head/v1\0";

function hexToBytes(hex) {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(i * 2, 2), 16);
  return out;
}

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

function fromBase64(text) {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

function equal(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** True when SHA-256 applied ``index`` times to the revealed seed gives ``commitment`` (docs/fairness.md "Seeds"). */
export async function seedReachesCommitment(seedHex, index, commitment) {
  let value = hexToBytes(seedHex);
  for (let i = 0; i < index; i++) value = await sha256(value);
  return hex(value) === commitment;
}

/** Every link of the export's hash chain: SHA-256(previous hash bytes || stored bytes). */
export async function chainIntact(exportDoc) {
  let previous = "0".repeat(64);
  let expected = 1;
  for (const entry of exportDoc.entries) {
    const digest = hex(await sha256(concat(hexToBytes(previous), new TextEncoder().encode(entry.data))));
    if (entry.version !== expected || digest !== entry.hash) return false;
    previous = entry.hash;
    expected += 1;
  }
  return Boolean(exportDoc.head) && exportDoc.head.hash === previous;
}

/** Every seed the export reveals (and a cut export's later seeds) hashes down to its commitment. */
export async function seedsReach(exportDoc) {
  const seeds = { ...(exportDoc.revealed_seeds || {}), ...(exportDoc.later_seeds || {}) };
  for (const [round, seed] of Object.entries(seeds)) {
    const r = Number(round);
    const commitment = exportDoc.commitments[Math.floor((r - 1) / CHAIN_LENGTH)];
    if (!commitment || !(await seedReachesCommitment(seed, ((r - 1) % CHAIN_LENGTH) + 1, commitment))) return false;
  }
  return true;
}

/** The leaf bytes of a head (services/fairness/transparency/leaves.py). */
export function leafBytes(gameId, version, hashHex) {
  const game = new TextEncoder().encode(gameId);
  const numbers = new DataView(new ArrayBuffer(10));
  numbers.setUint16(0, game.length);
  numbers.setBigUint64(2, BigInt(version));
  const bytes = new Uint8Array(numbers.buffer);
  return concat(new TextEncoder().encode(LEAF_LABEL), bytes.slice(0, 2), game, bytes.slice(2), hexToBytes(hashHex));
}

/** RFC 9162 2.1.3.2: does ``proof`` put the leaf hash at ``index`` under ``root`` of ``size`` leaves? */
export async function verifyInclusion(leafHash, index, size, proof, root) {
  if (!(index >= 0 && index < size)) return false;
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn & 1 || fn === sn) {
      r = await sha256(concat(Uint8Array.of(1), p, r));
      if (!(fn & 1)) while (!(fn & 1) && fn !== 0) { fn >>= 1; sn >>= 1; }
    } else {
      r = await sha256(concat(Uint8Array.of(1), r, p));
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && equal(r, root);
}

/** A checkpoint note signed by one of ``keys`` named as its origin: {size, root} or null. */
export async function openCheckpoint(note, keys) {
  const split = note.lastIndexOf("\n\n");
  if (split < 0) return null;
  const text = note.slice(0, split + 1);
  const lines = text.split("\n");
  const [origin, size, root] = lines;
  const signed = new TextEncoder().encode(text);
  for (const line of note.slice(split + 2).split("\n")) {
    if (!line.startsWith("— ")) continue;
    const [name, encoded] = line.slice(2).split(" ");
    if (name !== origin || !encoded) continue;
    const blob = fromBase64(encoded);
    for (const key of keys.filter((k) => k.name === origin)) {
      try {
        const publicKey = await crypto.subtle.importKey("raw", fromBase64(key.public_key), { name: "Ed25519" }, false, ["verify"]);
        if (await crypto.subtle.verify({ name: "Ed25519" }, publicKey, blob.slice(4), signed)) {
          return { size: Number(size), root: fromBase64(root) };
        }
      } catch {
        // a browser without Ed25519: the caller says the log could not be checked
      }
    }
  }
  return null;
}

/** The export against the public log as the service publishes it now (``GET /games/{id}/log``, the
 * keys from ``/.well-known/tablestream-keys``): "included" (its head is in the log), "prefix" (its
 * head is, and the log holds the game further: the start of the published history, a round's cut),
 * "fork" (the log holds another head at a version the file holds, or a later one and not its head:
 * a second history of the game), "bad_proof" (the log's inclusion proof for the head does not lead
 * to its signed checkpoint), "pending" (appended after the latest checkpoint, or newer than every
 * leaf of the game: the appender has not reached it yet), "unsigned" (no checkpoint that verifies),
 * or "unchecked" (no log yet, or no Ed25519 in this browser). ``found`` gets ``nextCheckpoint`` (the
 * unix time the log's next checkpoint is due), ``logged`` (the newest version the log holds of the
 * game) and ``keys`` (the published keys) (docs/fairness.md, "Proofs in exports and dispute
 * bundles"). */
export async function headInLog(exportDoc, fetchJson, found = {}) {
  const [proofs, keys] = await Promise.all([
    fetchJson(`/games/${encodeURIComponent(exportDoc.game_id)}/log`),
    fetchJson("/.well-known/tablestream-keys"),
  ]);
  found.nextCheckpoint = proofs.next_checkpoint;
  found.keys = keys.keys || [];
  if (!proofs.checkpoint) return "unchecked";
  const checkpoint = await openCheckpoint(proofs.checkpoint, found.keys);
  if (!checkpoint) return "unsigned";
  const leaves = proofs.leaves || [];
  const held = new Map(exportDoc.entries.map((e) => [e.version, e.hash]));
  // every head the log holds of this game, at a version the file holds too, must be the file's
  for (const leaf of leaves) {
    const hash = held.get(leaf.version);
    if (hash !== undefined && !equal(fromBase64(leaf.leaf), leafBytes(exportDoc.game_id, leaf.version, hash))) return "fork";
  }
  const head = exportDoc.head;
  const later = [...leaves.map((l) => l.version), ...(proofs.pending || [])].filter((v) => v > head.version);
  found.logged = Math.max(head.version, ...later);
  const leaf = leaves.find((l) => l.version === head.version);
  if (!leaf) return (proofs.pending || []).includes(head.version) || !later.length ? "pending" : "fork";
  const mine = leafBytes(exportDoc.game_id, head.version, head.hash);
  const ok = await verifyInclusion(await sha256(concat(Uint8Array.of(0), mine)), leaf.index, checkpoint.size,
    leaf.proof.map(fromBase64), checkpoint.root);
  if (!ok) return "bad_proof";
  return later.length ? "prefix" : "included";
}
