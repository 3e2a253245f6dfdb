// The delivery area's words (the page for an unknown address), in the four languages. Until the
// glossary takes them over, tw() looks here first and falls back to the shared catalogs' t().
import { lang, t } from "./i18n.js";

export const WORDS = {
  en: {
    "delivery.notFound.title": "Page not found",
    "delivery.notFound.text": "There is no page at {path}. The address may be mistyped, or the page has moved.",
    "delivery.notFound.back": "Back to the lobby",
  },
  pl: {
    "delivery.notFound.title": "Nie znaleziono strony",
    "delivery.notFound.text": "Pod adresem {path} nie ma żadnej strony. Adres może zawierać literówkę albo strona została przeniesiona.",
    "delivery.notFound.back": "Wróć do poczekalni",
  },
  fr: {
    "delivery.notFound.title": "Page introuvable",
    "delivery.notFound.text": "Il n'y a pas de page à l'adresse {path}. L'adresse est peut-être mal saisie, ou la page a été déplacée.",
    "delivery.notFound.back": "Retour au salon",
  },
  tr: {
    "delivery.notFound.title": "Sayfa bulunamadı",
    "delivery.notFound.text": "{path} adresinde bir sayfa yok. Adres yanlış yazılmış ya da sayfa taşınmış olabilir.",
    "delivery.notFound.back": "Lobiye dön",
  },
};

export function tw(key, params = {}) {
  const text = (WORDS[lang()] || {})[key] ?? WORDS.en[key];
  if (text === undefined) return t(key, params);
  return text.replace(/\{(\w+)\}/g, (_, name) => (name in params ? String(params[name]) : `{${name}}`));
}
