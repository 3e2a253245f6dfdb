// The receipts the service signed for this browser's moves, kept in IndexedDB per table, and their
// check against a finished game's export (docs/fairness.md, "Signed receipts"): each signature is
// verified here with WebCrypto's Ed25519, and the history must hold each receipt's hash at its version.
// The receipts of the KEEP_TABLES tables played here most recently are kept; an older table's go
// when a newer table's first receipt comes, so the store stays a few megabytes however long one plays.

const DB_NAME = "tablestream-receipts";
const STORE = "receipts";
const TABLES = "tables"; // {game_id, last_at}: when this browser last kept a receipt of the table
export const KEEP_TABLES = 200;
export const RECEIPTS_FORMAT = "tablestream-receipts/1";
const HASH = /^[0-9a-f]{64}$/;
const KEY_ID = /^[0-9a-f]{16}$/;

let opening = null;

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = resolve;
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

function database() {
  if (!opening) {
    const req = indexedDB.open(DB_NAME, 2);
    req.onupgradeneeded = (event) => {
      const db = req.result;
      if (event.oldVersion < 1) {
        db.createObjectStore(STORE, { keyPath: ["game_id", "version"] }).createIndex("game", "game_id");
      }
      if (event.oldVersion < 2) {
        const tables = db.createObjectStore(TABLES, { keyPath: "game_id" });
        // the tables of receipts kept before there was a list of them, each at its newest receipt
        const newest = new Map();
        req.transaction.objectStore(STORE).openCursor().onsuccess = (e) => {
          const cursor = e.target.result;
          if (cursor) {
            const r = cursor.value;
            const at = Number.isInteger(r.signed_at) ? r.signed_at : 0;
            newest.set(r.game_id, Math.max(at, newest.get(r.game_id) ?? 0));
            cursor.continue();
          } else {
            for (const [gameId, at] of newest) tables.put({ game_id: gameId, last_at: at });
          }
        };
      }
    };
    opening = request(req);
    opening.catch(() => { opening = null; });
  }
  return opening;
}

/** Drop the receipts of the tables played longest ago, beyond the KEEP_TABLES most recent. */
async function prune(db) {
  const tx = db.transaction([STORE, TABLES], "readwrite");
  const tables = tx.objectStore(TABLES);
  const all = await request(tables.getAll());
  if (all.length > KEEP_TABLES) {
    all.sort((a, b) => a.last_at - b.last_at);
    for (const table of all.slice(0, all.length - KEEP_TABLES)) {
      tables.delete(table.game_id);
      tx.objectStore(STORE).delete(IDBKeyRange.bound([table.game_id, -Infinity], [table.game_id, Infinity]));
    }
  }
  await done(tx);
}

/** Keep a receipt a command (or any answer carrying one) brought; a browser without IndexedDB keeps
 * none, and says so in the console rather than failing the move. */
export async function keep(receipt) {
  if (!receipt || typeof receipt.game_id !== "string" || typeof receipt.version !== "number") return;
  try {
    const db = await database();
    const tx = db.transaction([STORE, TABLES], "readwrite");
    tx.objectStore(STORE).put(receipt);
    const tables = tx.objectStore(TABLES);
    const known = await request(tables.getKey(receipt.game_id));
    tables.put({ game_id: receipt.game_id, last_at: Date.now() });
    const count = await request(tables.count());
    await done(tx);
    if (known === undefined && count > KEEP_TABLES) await prune(db);
  } catch (problem) {
    console.warn("receipt not kept", problem);
  }
}

/** The receipts kept for one table, in version order. */
export async function receiptsOf(gameId) {
  const db = await database();
  const all = await request(db.transaction(STORE).objectStore(STORE).index("game").getAll(gameId));
  return all.sort((a, b) => a.version - b.version);
}

/** Save the table's receipts as a file (``tablestream verify EXPORT --receipts FILE`` reads it). */
export async function download(gameId) {
  const doc = { format: RECEIPTS_FORMAT, game_id: gameId, receipts: await receiptsOf(gameId) };
  const url = URL.createObjectURL(new Blob([JSON.stringify(doc, null, 1)], { type: "application/json" }));
  const link = Object.assign(document.createElement("a"), { href: url, download: `receipts-${gameId}.json` });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

function fromBase64(text) {
  const raw = atob(text);
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

/** The exact bytes a receipt's signature covers (services/fairness/signing.py). */
export function receiptMessage(r) {
  return new TextEncoder().encode(
    `tablestream-receipt-v1\n${r.key_id}\n${r.game_id}\n${r.version}\n${r.hash}\n${r.signed_at}\n`);
}

function wellFormed(r) {
  return r && typeof r.game_id === "string" && Number.isInteger(r.version) && r.version >= 0
    && typeof r.hash === "string" && HASH.test(r.hash) && typeof r.key_id === "string" && KEY_ID.test(r.key_id)
    && Number.isInteger(r.signed_at) && typeof r.signature === "string";
}

/** Does this browser verify Ed25519 with WebCrypto? (Chromium 137+, Firefox 129+, Safari 17+.) */
export async function ed25519Supported(publicKeyB64) {
  if (!globalThis.crypto || !crypto.subtle) return false;
  try {
    await crypto.subtle.importKey("raw", fromBase64(publicKeyB64), { name: "Ed25519" }, false, ["verify"]);
    return true;
  } catch {
    return false;
  }
}

/** One receipt's verdict: "present" (signed and in the history), "rewritten" (validly signed, yet the
 * history lacks its hash at its version), "forged", "unknown_key", "key_not_valid", "other_game",
 * "malformed", or "unchecked" (this browser cannot verify Ed25519; the history check still ran:
 * "unchecked_missing" when the history lacks it). */
export async function checkReceipt(r, keys, hashes, gameId, canVerify) {
  if (!wellFormed(r)) return "malformed";
  const key = keys.find((k) => k.key_id === r.key_id);
  if (!key) return "unknown_key";
  if (r.signed_at < key.not_before || (key.not_after !== null && r.signed_at >= key.not_after)) return "key_not_valid";
  const held = hashes.get(r.version) === r.hash;
  if (!canVerify) return held ? "unchecked" : "unchecked_missing";
  let valid = false;
  try {
    const publicKey = await crypto.subtle.importKey("raw", fromBase64(key.public_key), { name: "Ed25519" }, false, ["verify"]);
    valid = await crypto.subtle.verify({ name: "Ed25519" }, publicKey, fromBase64(r.signature), receiptMessage(r));
  } catch {
    valid = false;
  }
  if (!valid) return "forged";
  if (r.game_id !== gameId) return "other_game";
  return held ? "present" : "rewritten";
}

/** Every kept receipt of a table against its export: [{receipt, verdict}], and whether Ed25519 ran. */
export async function checkAgainstExport(receipts, exportDoc) {
  const keys = (exportDoc.keys && exportDoc.keys.keys) || [];
  const hashes = new Map(exportDoc.entries.map((e) => [e.version, e.hash]));
  const canVerify = keys.length > 0 && await ed25519Supported(keys[0].public_key);
  const results = [];
  for (const receipt of receipts) {
    results.push({ receipt, verdict: await checkReceipt(receipt, keys, hashes, exportDoc.game_id, canVerify) });
  }
  return { results, canVerify };
}
