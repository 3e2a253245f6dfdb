// The leaderboard's and the player page's new words (readable ratings, "provisional"), in the four
// languages, until the shared glossary takes them; `tw` looks a key up here, with real plural forms
// (Intl.PluralRules on `n`), and falls back to the main catalogs (`t`).
import { t, lang } from "./i18n.js";

export const WORDS = {
  en: {
    "rating.explain": "Rated games only: every seat a registered player, no bots, no practice seed. "
      + "Everyone starts at 1000; beating strong players raises a rating more than beating beginners. "
      + "A rating is provisional for its first {games} rated games.",
    "rating.provisional": "provisional",
    "rating.provisionalHint": {
      one: "Provisional: only {n} rated game so far",
      other: "Provisional: only {n} rated games so far",
    },
    "rating.ratedGames": { one: "{n} rated game", other: "{n} rated games" },
    "rating.change": "Rating {before} → {after}",
  },
  pl: {
    "rating.explain": "Tylko gry rankingowe: przy każdym miejscu zarejestrowany gracz, bez botów i bez ziarna treningowego. "
      + "Każdy zaczyna od 1000; wygrana z silnymi graczami podnosi ranking bardziej niż z początkującymi. "
      + "Przez pierwsze {games} gier rankingowych ranking jest tymczasowy.",
    "rating.provisional": "tymczasowy",
    "rating.provisionalHint": {
      one: "Tymczasowy: dopiero {n} gra rankingowa",
      few: "Tymczasowy: dopiero {n} gry rankingowe",
      many: "Tymczasowy: dopiero {n} gier rankingowych",
      other: "Tymczasowy: dopiero {n} gry rankingowej",
    },
    "rating.ratedGames": {
      one: "{n} gra rankingowa",
      few: "{n} gry rankingowe",
      many: "{n} gier rankingowych",
      other: "{n} gry rankingowej",
    },
    "rating.change": "Ranking {before} → {after}",
  },
  fr: {
    "rating.explain": "Parties classées seulement : que des joueurs inscrits, sans robots ni graine d'entraînement. "
      + "Tout le monde part de 1000 ; battre des joueurs forts fait plus monter le classement que battre des débutants. "
      + "Un classement reste provisoire pendant ses {games} premières parties classées.",
    "rating.provisional": "provisoire",
    "rating.provisionalHint": {
      one: "Provisoire : seulement {n} partie classée pour l'instant",
      many: "Provisoire : seulement {n} de parties classées pour l'instant",
      other: "Provisoire : seulement {n} parties classées pour l'instant",
    },
    "rating.ratedGames": { one: "{n} partie classée", many: "{n} de parties classées", other: "{n} parties classées" },
    "rating.change": "Classement {before} → {after}",
  },
  tr: {
    "rating.explain": "Yalnızca puanlı oyunlar: her yerde kayıtlı bir oyuncu, bot yok, alıştırma tohumu yok. "
      + "Herkes 1000 puanla başlar; güçlü oyuncuları yenmek, yeni başlayanları yenmekten daha çok puan getirir. "
      + "Bir puan ilk {games} puanlı oyun boyunca geçicidir.",
    "rating.provisional": "geçici",
    "rating.provisionalHint": {
      one: "Geçici: şimdiye kadar yalnızca {n} puanlı oyun",
      other: "Geçici: şimdiye kadar yalnızca {n} puanlı oyun",
    },
    "rating.ratedGames": { one: "{n} puanlı oyun", other: "{n} puanlı oyun" },
    "rating.change": "Puan {before} → {after}",
  },
};

/** The text of ``key`` in the page's language: a plural entry picks its form by ``params.n``. */
export function tw(key, params = {}) {
  const current = lang();
  const entry = (WORDS[current] && WORDS[current][key]) ?? WORDS.en[key];
  if (entry === undefined) return t(key, params);
  const text = typeof entry === "string"
    ? entry
    : entry[new Intl.PluralRules(current).select(Number(params.n))] ?? entry.other;
  return text.replace(/\{(\w+)\}/g, (_, name) => (name in params ? String(params[name]) : `{${name}}`));
}
