// The table options' names, one-line explanations and choices in the four languages of the
// rulebooks. English explanations come from the server (GET /games/options, the same text as the
// API's schema); an option missing here shows the server's English text.
import { lang } from "./i18n.js";

const TEXTS = {
  en: {
    two_sets: ["two sets"],
    reveal_all_own_first: ["turn all own discs"],
    first_after_elimination: ["first after an elimination", {
      eliminated_chooses: "the eliminated player chooses", left_neighbour: "left neighbour" }],
    last_chance: ["last chance"],
    first_player: ["first player"],
    turn_seconds: ["seconds per move"],
    expire_minutes: ["close a waiting table after (minutes)"],
    takeover_after: ["bot takes over after missed turns"],
    end_score: ["end score"],
    end_compare: ["end when the score is", { ge: "reached", gt: "passed" }],
    rounds: ["rounds"],
    tactical: ["tactical draft"],
    scoring: ["scoring", { classic: "classic", seed: "rulebook (20 per trick + 10 × round)" }],
    character_lead_no_suit: ["a character led: no suit"],
    scary_mary_escape_counts_as_pirate: ["Scary Mary as Escape still counts"],
  },
  pl: {
    two_sets: ["dwa zestawy", "Połącz dwa pudełka: od 3 do 12 graczy zamiast od 3 do 6 (każdy nadal ma 4 krążki)."],
    reveal_all_own_first: ["odkryj cały własny stos",
      "Wyzywający odkrywa cały swój stos, nawet ponad swoją deklarację (PL/TR)."],
    first_after_elimination: ["kto zaczyna po odpadnięciu",
      "Kto zaczyna, gdy wyzywający odpada: właściciel czaszki lub wybrany przez odpadającego (FR/TR), albo jego lewy sąsiad (PL).",
      { eliminated_chooses: "wybiera odpadający", left_neighbour: "lewy sąsiad" }],
    last_chance: ["ostatnia szansa", "Wariant francuski: gracz z jednym krążkiem dostaje na rundę kwiat „ostatniej szansy”."],
    first_player: ["pierwszy gracz", "Miejsce, które zaczyna 1. rundę; puste: losowane uczciwie."],
    turn_seconds: ["sekundy na ruch",
      "Ile sekund ma gracz na ruch, zanim serwer zagra za niego ruch domyślny; 0: bez zegara; puste: 60 przy stole publicznym, brak przy stole treningowym."],
    expire_minutes: ["zamknij czekający stół po (minutach)", "Po ilu minutach stół wciąż czekający na graczy zostaje zamknięty."],
    takeover_after: ["bot przejmuje po pominiętych ruchach", "Ile pominiętych ruchów z rzędu, zanim miejsce przejmie bot."],
    end_score: ["wynik końcowy", "Gra kończy się po rundzie, w której czyjeś byczki przekroczą ten wynik."],
    end_compare: ["koniec, gdy wynik jest",
      "„przekroczony”: dopiero więcej niż wynik końcowy kończy grę; „osiągnięty”: wystarczy go osiągnąć.",
      { ge: "osiągnięty", gt: "przekroczony" }],
    rounds: ["rundy", "Zagraj dokładnie tyle rund (wynik końcowy jest wtedy pomijany); puste: wyłączone."],
    tactical: ["dobór taktyczny", "Tryb zaawansowany: karty od 1 do 10n+4, wybierane jawnie po jednej; ręce są jawne."],
    scoring: ["punktacja", "Według instrukcji: trafiona deklaracja daje 20 za lewę i 10 × runda; klasyczna: 20 za lewę.",
      { classic: "klasyczna", seed: "według instrukcji" }],
    character_lead_no_suit: ["postać na wyjściu: bez koloru", "Pirat, Syrena lub Skull King zagrany jako pierwszy oznacza lewę bez koloru."],
    scary_mary_escape_counts_as_pirate: ["Scary Mary jako ucieczka nadal się liczy",
      "Scary Mary zagrana jako ucieczka nadal liczy się do premii +30 Skull Kinga."],
  },
  fr: {
    two_sets: ["deux boîtes", "Deux boîtes réunies : de 3 à 12 joueurs au lieu de 3 à 6 (chacun garde 4 disques)."],
    reveal_all_own_first: ["retourner toute sa pile",
      "Le challenger retourne toute sa propre pile, même au-delà de son pari (PL/TR)."],
    first_after_elimination: ["qui commence après une élimination",
      "Qui commence quand le challenger est éliminé : le propriétaire du crâne ou le choix de l'éliminé (FR/TR), ou son voisin de gauche (PL).",
      { eliminated_chooses: "l'éliminé choisit", left_neighbour: "voisin de gauche" }],
    last_chance: ["dernière chance", "Variante française : un joueur réduit à un disque reçoit une fleur « Dernière chance » pour une manche."],
    first_player: ["premier joueur", "La place qui commence la manche 1 ; vide : tirée au sort équitablement."],
    turn_seconds: ["secondes par coup",
      "Secondes dont dispose un joueur avant que le serveur joue son coup par défaut ; 0 : pas de minuteur ; vide : 60 à une table publique, aucun à une table d'entraînement."],
    expire_minutes: ["fermer une table en attente après (minutes)", "Minutes après lesquelles une table qui attend encore des joueurs est fermée."],
    takeover_after: ["un robot reprend après tours manqués", "Tours manqués d'affilée après lesquels un robot prend la place."],
    end_score: ["score de fin", "La partie s'arrête après la manche où les têtes de bœuf de quelqu'un dépassent ce total."],
    end_compare: ["fin quand le score est",
      "« dépassé » : il faut plus que le score de fin pour terminer ; « atteint » : l'atteindre suffit.",
      { ge: "atteint", gt: "dépassé" }],
    rounds: ["manches", "Jouer exactement ce nombre de manches (le score de fin est alors ignoré) ; vide : désactivé."],
    tactical: ["draft tactique", "Mode avancé : cartes de 1 à 10n+4, choisies face visible une par une ; les mains sont publiques."],
    scoring: ["décompte", "Règle du livret : un pari exact rapporte 20 par pli plus 10 × manche ; classique : 20 par pli.",
      { classic: "classique", seed: "règle du livret" }],
    character_lead_no_suit: ["personnage en entame : pas de couleur", "Un Pirate, une Sirène ou le Skull King en entame : le pli n'a pas de couleur."],
    scary_mary_escape_counts_as_pirate: ["Scary Mary en Fuite compte encore",
      "Scary Mary jouée comme Fuite compte encore pour les +30 du Skull King."],
  },
  tr: {
    two_sets: ["iki kutu", "İki kutu birleştirilir: 3-6 yerine 3-12 oyuncu (herkesin yine 4 diski olur)."],
    reveal_all_own_first: ["kendi yığınının tamamını aç", "Meydan okuyan, teklifini aşsa bile kendi yığınının tamamını açar (PL/TR)."],
    first_after_elimination: ["elenmeden sonra kim başlar",
      "Meydan okuyan elenince kim başlar: kurukafanın sahibi ya da elenenin seçtiği (FR/TR), veya elenenin solundaki (PL).",
      { eliminated_chooses: "elenen seçer", left_neighbour: "soldaki oyuncu" }],
    last_chance: ["son şans", "Fransız varyantı: tek diski kalan oyuncu bir tur için 'Son şans' çiçeği alır."],
    first_player: ["ilk oyuncu", "1. turu başlatan koltuk; boş: adil şekilde çekilir."],
    turn_seconds: ["hamle başına saniye",
      "Sunucu varsayılan hamleyi oynamadan önce oyuncunun hamle için saniyesi; 0: zamanlayıcı yok; boş: açık masada 60, alıştırma masasında yok."],
    expire_minutes: ["bekleyen masayı kapat (dakika)", "Hâlâ oyuncu bekleyen bir masanın kapatılacağı dakika."],
    takeover_after: ["kaçırılan hamleden sonra bot devralır", "Arka arkaya kaç hamle kaçırılınca koltuğu bir bot devralır."],
    end_score: ["bitiş puanı", "Birinin boğa başları bu toplamı geçtiği turdan sonra oyun biter."],
    end_compare: ["puan şöyle olunca biter",
      "'aşıldı': oyunu bitirmek için bitiş puanından fazlası gerekir; 'ulaşıldı': ulaşmak yeter.",
      { ge: "ulaşıldı", gt: "aşıldı" }],
    rounds: ["turlar", "Tam olarak bu kadar tur oyna (bitiş puanı o zaman yok sayılır); boş: kapalı."],
    tactical: ["taktik seçim", "İleri mod: 1'den 10n+4'e kartlar, açık olarak teker teker seçilir; eller herkese açıktır."],
    scoring: ["puanlama", "Kural kitabı: tutturulan teklif el başına 20 artı 10 × tur; klasik: el başına 20.",
      { classic: "klasik", seed: "kural kitabı" }],
    character_lead_no_suit: ["karakterle açılış: renk yok", "Açılışta oynanan Korsan, Denizkızı veya Skull King elin renksiz olduğu anlamına gelir."],
    scary_mary_escape_counts_as_pirate: ["Kaçış olarak Scary Mary yine sayılır",
      "Kaçış olarak oynanan Scary Mary, Skull King'in +30'u için yine sayılır."],
  },
};

function entry(name) {
  return TEXTS[lang()]?.[name] ?? TEXTS.en[name];
}

/** The option's name as a person reads it. */
export function optionLabel(option) {
  return entry(option.name)?.[0] ?? option.name.replaceAll("_", " ");
}

/** The option's one-line explanation; in English the server's own text. */
export function optionHelp(option) {
  const help = lang() === "en" ? null : entry(option.name)?.[1];
  return typeof help === "string" ? help : option.description;
}

/** The words for one of a choice option's values. */
export function choiceLabel(option, value) {
  const texts = entry(option.name) ?? [];
  const choices = texts.find((part) => typeof part === "object") ?? TEXTS.en[option.name]?.[1] ?? {};
  return choices[value] ?? value;
}

/** Every option name this module explains, per language: the tests check none is missing. */
export function explained(language) {
  return Object.keys(TEXTS[language] ?? {});
}
