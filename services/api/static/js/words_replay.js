// The replay viewer's words, in the four languages, until they join the glossary: same keys and plural
// format (an object of CLDR categories picked with Intl.PluralRules by `n`), looked up by tw(), which
// falls back on the shared catalog's t().
import { lang, t } from "./i18n.js";

export const WORDS = {
  en: {
    "replay.toTable": "Back to the table",
    "replay.where.setup": "Before round 1: the players sit down",
    "replay.where.bidding": "Round {r}, bidding",
    "replay.where.trick": "Round {r}, trick {n}",
    "replay.where.draft": "Round {r}, draft",
    "replay.where.turn": "Round {r}, turn {n}",
    "replay.where.placing": "Round {r}, placing discs",
    "replay.where.auction": "Round {r}, auction",
    "replay.where.challenge": "Round {r}, challenge",
    "replay.prevRound": "Previous round", "replay.nextRound": "Next round",
    "replay.prevStep.skull-king": "Previous trick", "replay.nextStep.skull-king": "Next trick",
    "replay.prevStep.six-nimmt": "Previous turn", "replay.nextStep.six-nimmt": "Next turn",
    "replay.prevStep.skull": "Previous phase", "replay.nextStep.skull": "Next phase",
    "replay.play": "Play", "replay.pause": "Pause", "replay.speed": "Speed",
    "replay.controls": "Replay controls", "replay.timeline": "Timeline",
    "replay.follow": "Moves of", "replay.you": "{name} (you)",
    "replay.prevMove": "Previous move", "replay.nextMove": "Next move",
    "replay.moveOf": "Move {i} of {n}",
    "replay.moves": { one: "{n} move", other: "{n} moves" },
    "replay.movedBy.player": "{name}'s move", "replay.movedBy.bot": "{name}'s bot moved", "replay.movedBy.timeout": "{name} ran out of time",
    "replay.now": "At this step",
    "replay.hands": "Every hand, revealed",
    "replay.keys": "Keys: ← → one step · Shift+← → {unit} · Page Up / Page Down a round · Space play or pause · M the next move of the followed seat (Shift+M the previous one)",
    "replay.unit.skull-king": "a trick", "replay.unit.six-nimmt": "a turn", "replay.unit.skull": "a phase",
  },
  pl: {
    "replay.toTable": "Wróć do stołu",
    "replay.where.setup": "Przed 1. rundą: gracze siadają do stołu",
    "replay.where.bidding": "Runda {r}, deklaracje",
    "replay.where.trick": "Runda {r}, lewa {n}",
    "replay.where.draft": "Runda {r}, dobór kart",
    "replay.where.turn": "Runda {r}, tura {n}",
    "replay.where.placing": "Runda {r}, układanie krążków",
    "replay.where.auction": "Runda {r}, licytacja",
    "replay.where.challenge": "Runda {r}, wyzwanie",
    "replay.prevRound": "Poprzednia runda", "replay.nextRound": "Następna runda",
    "replay.prevStep.skull-king": "Poprzednia lewa", "replay.nextStep.skull-king": "Następna lewa",
    "replay.prevStep.six-nimmt": "Poprzednia tura", "replay.nextStep.six-nimmt": "Następna tura",
    "replay.prevStep.skull": "Poprzednia faza", "replay.nextStep.skull": "Następna faza",
    "replay.play": "Odtwórz", "replay.pause": "Wstrzymaj", "replay.speed": "Tempo",
    "replay.controls": "Sterowanie powtórką", "replay.timeline": "Oś czasu",
    "replay.follow": "Ruchy gracza", "replay.you": "{name} (ty)",
    "replay.prevMove": "Poprzedni ruch", "replay.nextMove": "Następny ruch",
    "replay.moveOf": "Ruch {i} z {n}",
    "replay.moves": { one: "{n} ruch", few: "{n} ruchy", many: "{n} ruchów", other: "{n} ruchu" },
    "replay.movedBy.player": "Ruch gracza: {name}", "replay.movedBy.bot": "Za gracza {name} zagrał bot", "replay.movedBy.timeout": "Czas minął: {name}",
    "replay.now": "W tym kroku",
    "replay.hands": "Wszystkie ręce, odkryte",
    "replay.keys": "Klawisze: ← → jeden krok · Shift+← → {unit} · Page Up / Page Down runda · Spacja odtwarzanie lub pauza · M następny ruch śledzonego gracza (Shift+M poprzedni)",
    "replay.unit.skull-king": "lewa", "replay.unit.six-nimmt": "tura", "replay.unit.skull": "faza",
  },
  fr: {
    "replay.toTable": "Retour à la table",
    "replay.where.setup": "Avant la manche 1 : les joueurs s'installent",
    "replay.where.bidding": "Manche {r}, annonces",
    "replay.where.trick": "Manche {r}, pli {n}",
    "replay.where.draft": "Manche {r}, draft",
    "replay.where.turn": "Manche {r}, tour {n}",
    "replay.where.placing": "Manche {r}, pose des disques",
    "replay.where.auction": "Manche {r}, enchères",
    "replay.where.challenge": "Manche {r}, défi",
    "replay.prevRound": "Manche précédente", "replay.nextRound": "Manche suivante",
    "replay.prevStep.skull-king": "Pli précédent", "replay.nextStep.skull-king": "Pli suivant",
    "replay.prevStep.six-nimmt": "Tour précédent", "replay.nextStep.six-nimmt": "Tour suivant",
    "replay.prevStep.skull": "Phase précédente", "replay.nextStep.skull": "Phase suivante",
    "replay.play": "Lecture", "replay.pause": "Pause", "replay.speed": "Vitesse",
    "replay.controls": "Commandes de la rediffusion", "replay.timeline": "Chronologie",
    "replay.follow": "Coups de", "replay.you": "{name} (vous)",
    "replay.prevMove": "Coup précédent", "replay.nextMove": "Coup suivant",
    "replay.moveOf": "Coup {i} sur {n}",
    "replay.moves": { one: "{n} coup", many: "{n} de coups", other: "{n} coups" },
    "replay.movedBy.player": "Coup de {name}", "replay.movedBy.bot": "Le bot a joué pour {name}", "replay.movedBy.timeout": "{name} a manqué de temps",
    "replay.now": "À cette étape",
    "replay.hands": "Toutes les mains, révélées",
    "replay.keys": "Touches : ← → une étape · Maj+← → {unit} · Page préc. / Page suiv. une manche · Espace lecture ou pause · M le coup suivant du joueur suivi (Maj+M le précédent)",
    "replay.unit.skull-king": "un pli", "replay.unit.six-nimmt": "un tour", "replay.unit.skull": "une phase",
  },
  tr: {
    "replay.toTable": "Masaya dön",
    "replay.where.setup": "1. turdan önce: oyuncular yerlerini alıyor",
    "replay.where.bidding": "{r}. tur, tahminler",
    "replay.where.trick": "{r}. tur, {n}. el",
    "replay.where.draft": "{r}. tur, kart seçimi",
    "replay.where.turn": "{r}. tur, {n}. el",
    "replay.where.placing": "{r}. tur, disk koyma",
    "replay.where.auction": "{r}. tur, artırma",
    "replay.where.challenge": "{r}. tur, meydan okuma",
    "replay.prevRound": "Önceki tur", "replay.nextRound": "Sonraki tur",
    "replay.prevStep.skull-king": "Önceki el", "replay.nextStep.skull-king": "Sonraki el",
    "replay.prevStep.six-nimmt": "Önceki el", "replay.nextStep.six-nimmt": "Sonraki el",
    "replay.prevStep.skull": "Önceki aşama", "replay.nextStep.skull": "Sonraki aşama",
    "replay.play": "Oynat", "replay.pause": "Duraklat", "replay.speed": "Hız",
    "replay.controls": "Tekrar denetimleri", "replay.timeline": "Zaman çizelgesi",
    "replay.follow": "İzlenen oyuncu", "replay.you": "{name} (siz)",
    "replay.prevMove": "Önceki hamle", "replay.nextMove": "Sonraki hamle",
    "replay.moveOf": "Hamle {i} / {n}",
    "replay.moves": { one: "{n} hamle", other: "{n} hamle" },
    "replay.movedBy.player": "Hamle: {name}", "replay.movedBy.bot": "{name} yerine bot oynadı", "replay.movedBy.timeout": "Süre doldu: {name}",
    "replay.now": "Bu adımda",
    "replay.hands": "Bütün eller, açık",
    "replay.keys": "Tuşlar: ← → bir adım · Shift+← → {unit} · Page Up / Page Down bir tur · Boşluk oynat veya duraklat · M izlenen oyuncunun sonraki hamlesi (Shift+M öncekisi)",
    "replay.unit.skull-king": "bir el", "replay.unit.six-nimmt": "bir el", "replay.unit.skull": "bir aşama",
  },
};

const rules = new Map();

function plural(language, n) {
  if (!rules.has(language)) rules.set(language, new Intl.PluralRules(language));
  return rules.get(language).select(Number(n));
}

function fill(text, params) {
  return text.replace(/\{(\w+)\}/g, (_, name) => (name in params ? String(params[name]) : `{${name}}`));
}

/** The word of `key` in the page's language, else English, else the shared catalog's; an entry that
 * is an object is a plural, picked by `params.n`. */
export function tw(key, params = {}) {
  const language = lang();
  const entry = WORDS[language]?.[key] ?? WORDS.en[key];
  if (entry === undefined) return t(key, params);
  if (typeof entry === "string") return fill(entry, params);
  return fill(entry[plural(language, params.n)] ?? entry.other, params);
}
