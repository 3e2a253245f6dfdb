// The public log of game heads, checked in the browser (docs/fairness.md "Transparency log"): RFC 9162
// inclusion and consistency proofs (WebCrypto SHA-256), and the checkpoint this browser saw last
// (localStorage), so that a log which forked or rewrote an old leaf is caught on the next visit.

const KEPT = "tablestream.tlog.checkpoint";

const b64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
const toB64 = (bytes) => btoa(String.fromCharCode(...bytes));
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

async function sha256(...parts) {
  const size = parts.reduce((n, p) => n + p.length, 0);
  const all = new Uint8Array(size);
  let at = 0;
  for (const p of parts) { all.set(p, at); at += p.length; }
  return new Uint8Array(await crypto.subtle.digest("SHA-256", all));
}

export const leafHash = (data) => sha256(Uint8Array.of(0), data);
export const nodeHash = (left, right) => sha256(Uint8Array.of(1), left, right);

/** RFC 9162 2.1.3.2: ``proof`` shows leaf hash ``leaf`` at ``index`` in the tree of ``size`` with root ``root``. */
export async function verifyInclusion(leaf, index, size, proof, root) {
  if (!(index >= 0 && index < size)) return false;
  let fn = index, sn = size - 1, r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
    } else {
      r = await nodeHash(r, p);
    }
    fn = Math.floor(fn / 2); sn = Math.floor(sn / 2);
  }
  return sn === 0 && same(r, root);
}

/** RFC 9162 2.1.4.2: ``proof`` shows the tree of ``newSize`` (``newRoot``) extends that of ``oldSize`` (``oldRoot``). */
export async function verifyConsistency(oldSize, newSize, proof, oldRoot, newRoot) {
  if (!(oldSize >= 0 && oldSize <= newSize)) return false;
  if (oldSize === newSize) return proof.length === 0 && same(oldRoot, newRoot);
  if (oldSize === 0) return proof.length === 0;
  if (!proof.length) return false;
  const path = (oldSize & (oldSize - 1)) === 0 ? [oldRoot, ...proof] : [...proof];
  let fn = oldSize - 1, sn = newSize - 1;
  while (fn % 2 === 1) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
  let fr = path[0], sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
    } else {
      sr = await nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2); sn = Math.floor(sn / 2);
  }
  return sn === 0 && same(fr, oldRoot) && same(sr, newRoot);
}

/** A checkpoint note's text lines: origin, size, root (bytes). */
export function parseCheckpoint(note) {
  const [origin, size, root] = note.split("\n");
  if (!origin || !/^\d+$/.test(size || "")) throw new Error("not a checkpoint");
  return { origin, size: Number(size), root: b64(root), text: note.split("\n\n")[0] + "\n" };
}

/** SHA-256(name || 0x0A || 0x01 || key)[:4] as a number: a signed note's key hash (C2SP signed-note). */
async function noteKeyHash(name, publicKey) {
  const digest = await sha256(new TextEncoder().encode(name + "\n"), Uint8Array.of(1), publicKey);
  return new DataView(digest.buffer).getUint32(0);
}

/**
 * The checkpoint's signature against the service's keys (``/.well-known/tablestream-keys``): "ok",
 * "unknown_key" (no key named as the origin signed it), "expired" (the key was not valid at the
 * checkpoint's timestamp), "forged" (a known key's signature fails) or "unchecked" (no Ed25519 here).
 */
export async function checkSignature(note, keysDoc) {
  const split = note.indexOf("\n\n");
  const text = note.slice(0, split + 1);
  const origin = text.split("\n")[0];
  const stamp = /\ntimestamp (\d+)\n/.exec(text);
  const when = stamp ? Number(stamp[1]) : NaN;
  const keys = ((keysDoc && keysDoc.keys) || []).filter((k) => k.name === origin);
  for (const line of note.slice(split + 2).split("\n")) {
    if (!line.startsWith("— " + origin + " ")) continue;
    const blob = b64(line.slice(origin.length + 3));
    const hash = new DataView(blob.buffer).getUint32(0);
    for (const key of keys) {
      const raw = b64(key.public_key);
      if ((await noteKeyHash(key.name, raw)) !== hash) continue;
      let valid;
      try {
        const publicKey = await crypto.subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
        valid = await crypto.subtle.verify({ name: "Ed25519" }, publicKey, blob.slice(4), new TextEncoder().encode(text));
      } catch { return "unchecked"; }
      if (!valid) return "forged";
      const inPeriod = key.not_before <= when && (key.not_after === null || when < key.not_after);
      return inPeriod ? "ok" : "expired";
    }
  }
  return "unknown_key";
}

function kept() {
  try {
    const saved = JSON.parse(localStorage.getItem(KEPT) || "null");
    return saved && { ...saved, root: b64(saved.root) };
  } catch { return null; }
}

function keep(checkpoint) {
  localStorage.setItem(KEPT, JSON.stringify({ origin: checkpoint.origin, size: checkpoint.size, root: toB64(checkpoint.root) }));
}

/**
 * Fetch the latest checkpoint and check it against the one this browser kept. Returns
 * {kind: "first" | "consistent" | "fork" | "bad_signature" | "unavailable", size, old}: a checkpoint
 * whose signature fails (an unknown key, a key not valid then, a forged one) is refused before
 * anything else; a consistent one replaces the kept one, a fork never does (the old one stays, as
 * evidence).
 */
export async function checkLog(fetchText = (path) => fetch(path).then((r) => (r.ok ? r.text() : Promise.reject(new Error(r.status))))) {
  let latest, signature;
  try {
    const note = await fetchText("/log/checkpoint");
    latest = parseCheckpoint(note);
    signature = await checkSignature(note, JSON.parse(await fetchText("/.well-known/tablestream-keys")));
  } catch { return { kind: "unavailable" }; }
  if (!["ok", "unchecked"].includes(signature)) return { kind: "bad_signature", signature, size: latest.size };
  const old = kept();
  if (!old || old.origin !== latest.origin) { keep(latest); return { kind: "first", size: latest.size }; }
  const result = (kind) => ({ kind, size: latest.size, old: old.size });
  if (latest.size < old.size) return result("fork");
  let proof = [];
  if (latest.size > old.size) {
    try {
      proof = JSON.parse(await fetchText(`/log/consistency?from=${old.size}&to=${latest.size}`)).proof.map(b64);
    } catch { return result("fork"); }
  }
  if (!(await verifyConsistency(old.size, latest.size, proof, old.root, latest.root))) return result("fork");
  keep(latest);
  return result("consistent");
}

/** How many of the game's logged heads (``GET /games/{id}/log``) are proven in its checkpoint. */
export async function checkGameLeaves(proofs) {
  if (!proofs || !proofs.checkpoint) return { ok: 0, n: 0 };
  const checkpoint = parseCheckpoint(proofs.checkpoint);
  let ok = 0;
  for (const leaf of proofs.leaves) {
    const hash = await leafHash(b64(leaf.leaf));
    if (await verifyInclusion(hash, leaf.index, checkpoint.size, leaf.proof.map(b64), checkpoint.root)) ok++;
  }
  return { ok, n: proofs.leaves.length + proofs.pending.length };
}

const TRUSTED = "tablestream.tlog.witnesses";

/** The witnesses this browser's reader trusts: their vkeys and how many must have cosigned. */
export function trustedWitnesses() {
  try {
    const saved = JSON.parse(localStorage.getItem(TRUSTED) || "null");
    if (saved && Array.isArray(saved.vkeys)) return { vkeys: saved.vkeys, quorum: saved.quorum || 1 };
  } catch { /* storage may be off */ }
  return { vkeys: [], quorum: 1 };
}

export function trustWitnesses(vkeys, quorum) {
  localStorage.setItem(TRUSTED, JSON.stringify({ vkeys, quorum }));
}

/** A witness's C2SP tlog-cosignature key, ``<name>+<key ID>+base64(0x04 || key)``: {name, id, key},
 * or null when it cannot be read (its key ID must be SHA-256(name || 0x0A || 0x04 || key)[:4]). */
export async function parseWitnessKey(vkey) {
  const parts = /^([^+\s]+)\+([0-9a-f]{8})\+(\S+)$/.exec(vkey.trim()); // base64 may hold "+" itself
  if (!parts) return null;
  const [, name, id, material] = parts;
  let raw;
  try { raw = b64(material); } catch { return null; }
  if (raw.length !== 33 || raw[0] !== 4) return null;
  const digest = await sha256(new TextEncoder().encode(name + "\n"), raw);
  const keyId = new DataView(digest.buffer).getUint32(0);
  return keyId === parseInt(id, 16) ? { name, id: keyId, key: raw.slice(1) } : null;
}

/** How many of the ``trusted`` witnesses (parsed keys) cosigned the checkpoint ``note``, from the
 * cosignatures the log received for it (``GET /log/cosignatures``): each line's Ed25519 signature over
 * ``cosignature/v1\ntime <t>\n`` and the checkpoint's text. ``null`` without Ed25519 here. */
export async function countCosigners(note, cosignatures, trusted) {
  const text = note.slice(0, note.indexOf("\n\n") + 1);
  let signed = 0;
  for (const key of trusted) {
    for (const { line } of cosignatures) {
      if (!line.startsWith(`— ${key.name} `)) continue;
      const blob = b64(line.slice(key.name.length + 3));
      if (blob.length !== 76 || new DataView(blob.buffer).getUint32(0) !== key.id) continue;
      const time = new DataView(blob.buffer).getBigUint64(4);
      const message = new TextEncoder().encode(`cosignature/v1\ntime ${time}\n${text}`);
      try {
        const publicKey = await crypto.subtle.importKey("raw", key.key, { name: "Ed25519" }, false, ["verify"]);
        if (await crypto.subtle.verify({ name: "Ed25519" }, publicKey, blob.slice(12), message)) { signed++; break; }
      } catch { return null; }
    }
  }
  return signed;
}

/** The latest checkpoint against the witnesses the reader trusts: {k, n, quorum, unreadable}, or
 * null when none is trusted (``unreadable``: the vkeys that cannot be read; ``k`` null: no Ed25519). */
export async function checkWitnesses(fetchJson) {
  const { vkeys, quorum } = trustedWitnesses();
  if (!vkeys.length) return null;
  const parsed = await Promise.all(vkeys.map(parseWitnessKey));
  const trusted = parsed.filter(Boolean);
  const unreadable = vkeys.filter((_, i) => !parsed[i]);
  let k = 0;
  try {
    const answer = await fetchJson("/log/cosignatures");
    k = await countCosigners(answer.checkpoint, answer.cosignatures || [], trusted);
  } catch { k = 0; }
  return { k, n: vkeys.length, quorum, unreadable };
}
