// UI text in four languages. The log's sentences come from the server in the same language.

const en = {
  "nav.lobby": "Lobby", "nav.api": "API", "nav.language": "Language",
  "foot.fair": "Provably fair: every shuffle is committed before anyone joins, and checkable after each round.",
  "common.loading": "Loading…", "common.yes": "yes", "common.no": "no", "common.none": "none",
  "lobby.hero": "Card and bluffing games with friends, fair by construction.",
  "lobby.create": "New table", "lobby.game": "Game", "lobby.players": "Players",
  "lobby.options": "Table options", "lobby.seed": "Practice seed",
  "lobby.seedHelp": "Optional, 64 hex characters: the same seed deals the same cards (a practice table).",
  "lobby.random": "Random", "lobby.name": "Your name",
  "lobby.clientSeed": "Your entropy (optional)",
  "lobby.clientSeedHelp": "Any text up to 64 characters, mixed into every shuffle.",
  "lobby.createBtn": "Create and sit down", "lobby.open": "Tables", "lobby.none": "No open tables yet. Start one!",
  "lobby.join": "Join", "lobby.spectate": "Watch", "lobby.bots": "Fill empty seats with bots",
  "lobby.seats": "{taken}/{seats} seats", "lobby.practice": "practice", "lobby.unset": "(not set)",
  "lobby.nameRequired": "Please enter your name.", "lobby.botsMissing": "Bots are not available on this server yet.",
  "lobby.host": "you host",
  "status.waiting": "Waiting for players", "status.playing": "In play", "status.finished": "Finished",
  "table.round": "Round {n}", "table.roundOf": "Round {n} of {total}", "table.yourTurn": "Your move",
  "table.waitingFor": "Waiting for {names}", "table.you": "you", "table.timeLeft": "{s} s",
  "table.log": "Table log", "table.scores": "Scores", "table.won": "{names} won!", "table.gameOver": "Game over",
  "table.replay": "Watch the replay", "table.audit": "Check fairness", "table.join": "Take a seat",
  "table.joinBtn": "Sit down", "table.spectating": "You are watching this table.",
  "table.share": "Invite friends: send them this page's address.", "table.bot": "bot", "table.left": "left",
  "table.leave": "Leave table", "table.seatsTaken": "{taken} of {seats} seats taken",
  "table.reconnecting": "Reconnecting…", "table.notFound": "There is no such table.", "table.seat": "Seat {n}",
  "table.emptySeat": "empty seat", "table.practice": "Practice table", "table.final": "Final scores",
  "skull.hand": "Your discs", "skull.flower": "Flower", "skull.skull": "Skull", "skull.last_chance": "Last chance",
  "skull.place": "Place a disc", "skull.bid": "Bid", "skull.pass": "Pass", "skull.flip": "Flip",
  "skull.stack": "{n} on mat", "skull.discs": "{n} discs", "skull.points": "{n}/2 points",
  "skull.passed": "passed", "skull.eliminated": "out", "skull.challenge": "{name} must turn {n} flowers",
  "skull.bidBy": "Highest bid: {n} by {name}", "skull.discardPick": "Pick one of {name}'s discs, face down",
  "skull.discardOwn": "Choose the disc you lose", "skull.chooseFirst": "Choose who starts the next round",
  "skull.lost": "Lost", "skull.flipsLeft": "{n} left to turn", "skull.raise": "Open or raise the bid",
  "skull.onMats": "{n} discs on the mats", "skull.yourStack": "Your stack (bottom first)",
  "skull.flipHint": "Choose a stack to flip its top disc", "skull.position": "Disc {n}",
  "nimmt.rows": "Rows", "nimmt.hand": "Your hand", "nimmt.takeRow": "Take row {n}",
  "nimmt.chooseRow": "Your card is lower than every row: choose a row to take.",
  "nimmt.selected": "has chosen", "nimmt.selecting": "choosing…", "nimmt.penalty": "Bullheads",
  "nimmt.turn": "Turn {n} of 10", "nimmt.yourPick": "Your card: {card}", "nimmt.revealed": "Revealed",
  "nimmt.draft": "Draft: take a card", "nimmt.row": "Row {n}", "nimmt.pick": "Choose a card to play",
  "nimmt.bullheads": "{n} bullheads", "nimmt.pile": "pile",
  "sk.hand": "Your hand", "sk.trick": "Trick in play", "sk.lead": "Lead suit: {suit}", "sk.noLead": "No suit led yet",
  "sk.bid": "How many tricks will you win?", "sk.bids": "Bid", "sk.tricks": "Tricks", "sk.score": "Score",
  "sk.dealer": "dealer", "sk.hasBid": "bid in", "sk.bidding": "bidding…", "sk.as_pirate": "as Pirate",
  "sk.as_escape": "as Escape", "sk.lastTrick": "Last trick won by {name}", "sk.play": "Play a card",
  "sk.yourBid": "Your bid: {n}",
  "suit.yellow": "Yellow", "suit.red": "Red", "suit.blue": "Blue", "suit.black": "Black",
  "card.escape": "Escape", "card.pirate": "Pirate", "card.mermaid": "Mermaid", "card.scary-mary": "Scary Mary",
  "card.skull-king": "Skull King",
  "replay.title": "Replay", "replay.first": "First", "replay.prev": "Back", "replay.next": "Forward",
  "replay.last": "Last", "replay.version": "Step {v} of {head}", "replay.hint": "Use ← and → to step.",
  "replay.auditRound": "Audit of round {n}", "replay.notFinished": "A game can be replayed once it is over.",
  "replay.seatView": "{name}'s view",
  "audit.title": "Fairness audit", "audit.hashChain": "History is intact (hash chain)",
  "audit.commitment": "Published commitment", "audit.round": "Round {n}", "audit.setup": "Setup",
  "audit.seed": "Revealed seed", "audit.serverCheck": "Seed matches the chain (server)",
  "audit.browserCheck": "Seed hashes down to the commitment (checked in your browser)",
  "audit.rules": "Events are what the rules produce", "audit.chance": "Chance outcomes re-derived",
  "audit.passed": "passed", "audit.failed": "failed", "audit.pending": "round not finished",
  "audit.checking": "checking…", "audit.summary": "{ok} of {n} checks passed",
  "audit.explain": "Before anyone joined, the server published s₀. After each round it reveals s_r; hashing s_r r times with SHA-256 must give s₀. Your browser does that below.",
  "audit.noCrypto": "This browser cannot hash here (WebCrypto needs https or localhost).",
  "audit.events": "{n} events",
};

const pl = {
  "nav.lobby": "Poczekalnia", "nav.api": "API", "nav.language": "Język",
  "foot.fair": "Uczciwość do sprawdzenia: każde tasowanie jest zobowiązane, zanim ktokolwiek dołączy.",
  "common.loading": "Wczytywanie…", "common.yes": "tak", "common.no": "nie", "common.none": "brak",
  "lobby.hero": "Gry karciane i blefu ze znajomymi, uczciwe z założenia.",
  "lobby.create": "Nowy stół", "lobby.game": "Gra", "lobby.players": "Gracze",
  "lobby.options": "Opcje stołu", "lobby.seed": "Ziarno treningowe",
  "lobby.seedHelp": "Opcjonalne, 64 znaki szesnastkowe: to samo ziarno rozda te same karty.",
  "lobby.random": "Losuj", "lobby.name": "Twoje imię",
  "lobby.clientSeed": "Twoja entropia (opcjonalnie)",
  "lobby.clientSeedHelp": "Dowolny tekst do 64 znaków, wmieszany w każde tasowanie.",
  "lobby.createBtn": "Utwórz i usiądź", "lobby.open": "Stoły", "lobby.none": "Brak otwartych stołów. Załóż pierwszy!",
  "lobby.join": "Dołącz", "lobby.spectate": "Oglądaj", "lobby.bots": "Uzupełnij wolne miejsca botami",
  "lobby.seats": "{taken}/{seats} miejsc", "lobby.practice": "trening", "lobby.unset": "(brak)",
  "lobby.nameRequired": "Podaj swoje imię.", "lobby.botsMissing": "Boty nie są jeszcze dostępne na tym serwerze.",
  "lobby.host": "twój stół",
  "status.waiting": "Czeka na graczy", "status.playing": "W grze", "status.finished": "Zakończona",
  "table.round": "Runda {n}", "table.roundOf": "Runda {n} z {total}", "table.yourTurn": "Twój ruch",
  "table.waitingFor": "Czekamy na: {names}", "table.you": "ty", "table.timeLeft": "{s} s",
  "table.log": "Przebieg gry", "table.scores": "Wyniki", "table.won": "Wygrywa: {names}!", "table.gameOver": "Koniec gry",
  "table.replay": "Obejrzyj powtórkę", "table.audit": "Sprawdź uczciwość", "table.join": "Zajmij miejsce",
  "table.joinBtn": "Usiądź", "table.spectating": "Oglądasz ten stół.",
  "table.share": "Zaproś znajomych: wyślij im adres tej strony.", "table.bot": "bot", "table.left": "wyszedł",
  "table.leave": "Opuść stół", "table.seatsTaken": "Zajęte miejsca: {taken} z {seats}",
  "table.reconnecting": "Ponowne łączenie…", "table.notFound": "Nie ma takiego stołu.", "table.seat": "Miejsce {n}",
  "table.emptySeat": "wolne miejsce", "table.practice": "Stół treningowy", "table.final": "Wyniki końcowe",
  "skull.hand": "Twoje krążki", "skull.flower": "Kwiat", "skull.skull": "Czaszka", "skull.last_chance": "Ostatnia szansa",
  "skull.place": "Połóż krążek", "skull.bid": "Licytuj", "skull.pass": "Pas", "skull.flip": "Odkryj",
  "skull.stack": "{n} na macie", "skull.discs": "krążki: {n}", "skull.points": "punkty: {n}/2",
  "skull.passed": "pas", "skull.eliminated": "odpada", "skull.challenge": "{name} musi odkryć {n} kwiatów",
  "skull.bidBy": "Najwyższa oferta: {n} ({name})", "skull.discardPick": "Wybierz zakryty krążek gracza {name}",
  "skull.discardOwn": "Wybierz krążek, który tracisz", "skull.chooseFirst": "Wybierz, kto zaczyna następną rundę",
  "skull.lost": "Stracone", "skull.flipsLeft": "do odkrycia: {n}", "skull.raise": "Otwórz lub podbij licytację",
  "skull.onMats": "krążki na matach: {n}", "skull.yourStack": "Twój stos (od dołu)",
  "skull.flipHint": "Wybierz stos, by odkryć jego wierzchni krążek", "skull.position": "Krążek {n}",
  "nimmt.rows": "Rzędy", "nimmt.hand": "Twoja ręka", "nimmt.takeRow": "Weź rząd {n}",
  "nimmt.chooseRow": "Twoja karta jest niższa niż każdy rząd: wybierz rząd do zabrania.",
  "nimmt.selected": "wybrał(a)", "nimmt.selecting": "wybiera…", "nimmt.penalty": "Byki",
  "nimmt.turn": "Tura {n} z 10", "nimmt.yourPick": "Twoja karta: {card}", "nimmt.revealed": "Odkryte",
  "nimmt.draft": "Dobór: weź kartę", "nimmt.row": "Rząd {n}", "nimmt.pick": "Wybierz kartę do zagrania",
  "nimmt.bullheads": "byki: {n}", "nimmt.pile": "stos",
  "sk.hand": "Twoja ręka", "sk.trick": "Bieżąca lewa", "sk.lead": "Kolor wiodący: {suit}", "sk.noLead": "Brak koloru wiodącego",
  "sk.bid": "Ile lew weźmiesz?", "sk.bids": "Deklaracja", "sk.tricks": "Lewy", "sk.score": "Wynik",
  "sk.dealer": "rozdaje", "sk.hasBid": "zadeklarował(a)", "sk.bidding": "deklaruje…", "sk.as_pirate": "jako Pirat",
  "sk.as_escape": "jako Ucieczka", "sk.lastTrick": "Ostatnią lewę wziął/wzięła {name}", "sk.play": "Zagraj kartę",
  "sk.yourBid": "Twoja deklaracja: {n}",
  "suit.yellow": "Żółty", "suit.red": "Czerwony", "suit.blue": "Niebieski", "suit.black": "Czarny",
  "card.escape": "Ucieczka", "card.pirate": "Pirat", "card.mermaid": "Syrena", "card.scary-mary": "Straszna Mary",
  "card.skull-king": "Skull King",
  "replay.title": "Powtórka", "replay.first": "Początek", "replay.prev": "Wstecz", "replay.next": "Dalej",
  "replay.last": "Koniec", "replay.version": "Krok {v} z {head}", "replay.hint": "Użyj ← i →, by przewijać.",
  "replay.auditRound": "Audyt rundy {n}", "replay.notFinished": "Powtórka jest dostępna po zakończeniu gry.",
  "replay.seatView": "Widok: {name}",
  "audit.title": "Audyt uczciwości", "audit.hashChain": "Historia nienaruszona (łańcuch skrótów)",
  "audit.commitment": "Opublikowane zobowiązanie", "audit.round": "Runda {n}", "audit.setup": "Przygotowanie",
  "audit.seed": "Ujawnione ziarno", "audit.serverCheck": "Ziarno pasuje do łańcucha (serwer)",
  "audit.browserCheck": "Ziarno prowadzi do zobowiązania (sprawdzone w przeglądarce)",
  "audit.rules": "Zdarzenia zgodne z zasadami", "audit.chance": "Losowania odtworzone",
  "audit.passed": "zgodne", "audit.failed": "niezgodne", "audit.pending": "runda trwa",
  "audit.checking": "sprawdzanie…", "audit.summary": "Zgodnych sprawdzeń: {ok} z {n}",
  "audit.explain": "Zanim ktokolwiek dołączył, serwer opublikował s₀. Po każdej rundzie ujawnia s_r; r-krotne SHA-256 z s_r musi dać s₀. Twoja przeglądarka sprawdza to poniżej.",
  "audit.noCrypto": "Ta przeglądarka nie może tu liczyć skrótów (WebCrypto wymaga https lub localhost).",
  "audit.events": "zdarzeń: {n}",
};

const fr = {
  "nav.lobby": "Salon", "nav.api": "API", "nav.language": "Langue",
  "foot.fair": "Équité vérifiable : chaque mélange est engagé avant que quiconque ne rejoigne.",
  "common.loading": "Chargement…", "common.yes": "oui", "common.no": "non", "common.none": "aucun",
  "lobby.hero": "Jeux de cartes et de bluff entre amis, équitables par construction.",
  "lobby.create": "Nouvelle table", "lobby.game": "Jeu", "lobby.players": "Joueurs",
  "lobby.options": "Options de la table", "lobby.seed": "Graine d'entraînement",
  "lobby.seedHelp": "Facultatif, 64 caractères hexadécimaux : la même graine distribue les mêmes cartes.",
  "lobby.random": "Au hasard", "lobby.name": "Votre nom",
  "lobby.clientSeed": "Votre entropie (facultatif)",
  "lobby.clientSeedHelp": "Un texte de 64 caractères au plus, mêlé à chaque mélange.",
  "lobby.createBtn": "Créer et s'asseoir", "lobby.open": "Tables", "lobby.none": "Aucune table ouverte. Lancez-en une !",
  "lobby.join": "Rejoindre", "lobby.spectate": "Regarder", "lobby.bots": "Compléter avec des robots",
  "lobby.seats": "{taken}/{seats} places", "lobby.practice": "entraînement", "lobby.unset": "(non défini)",
  "lobby.nameRequired": "Indiquez votre nom.", "lobby.botsMissing": "Les robots ne sont pas encore disponibles sur ce serveur.",
  "lobby.host": "votre table",
  "status.waiting": "En attente de joueurs", "status.playing": "En cours", "status.finished": "Terminée",
  "table.round": "Manche {n}", "table.roundOf": "Manche {n} sur {total}", "table.yourTurn": "À vous de jouer",
  "table.waitingFor": "En attente de {names}", "table.you": "vous", "table.timeLeft": "{s} s",
  "table.log": "Journal de la table", "table.scores": "Scores", "table.won": "{names} gagne !", "table.gameOver": "Partie terminée",
  "table.replay": "Revoir la partie", "table.audit": "Vérifier l'équité", "table.join": "Prendre une place",
  "table.joinBtn": "S'asseoir", "table.spectating": "Vous regardez cette table.",
  "table.share": "Invitez vos amis : envoyez-leur l'adresse de cette page.", "table.bot": "robot", "table.left": "parti",
  "table.leave": "Quitter la table", "table.seatsTaken": "{taken} places prises sur {seats}",
  "table.reconnecting": "Reconnexion…", "table.notFound": "Cette table n'existe pas.", "table.seat": "Place {n}",
  "table.emptySeat": "place libre", "table.practice": "Table d'entraînement", "table.final": "Scores finaux",
  "skull.hand": "Vos disques", "skull.flower": "Fleur", "skull.skull": "Crâne", "skull.last_chance": "Dernière chance",
  "skull.place": "Poser un disque", "skull.bid": "Enchérir", "skull.pass": "Passer", "skull.flip": "Retourner",
  "skull.stack": "{n} sur le tapis", "skull.discs": "{n} disques", "skull.points": "{n}/2 points",
  "skull.passed": "a passé", "skull.eliminated": "éliminé", "skull.challenge": "{name} doit retourner {n} fleurs",
  "skull.bidBy": "Enchère la plus haute : {n} par {name}", "skull.discardPick": "Choisissez un disque de {name}, face cachée",
  "skull.discardOwn": "Choisissez le disque que vous perdez", "skull.chooseFirst": "Choisissez qui commence la manche suivante",
  "skull.lost": "Perdu", "skull.flipsLeft": "encore {n} à retourner", "skull.raise": "Ouvrir ou relancer l'enchère",
  "skull.onMats": "{n} disques sur les tapis", "skull.yourStack": "Votre pile (de bas en haut)",
  "skull.flipHint": "Choisissez une pile pour retourner son disque du dessus", "skull.position": "Disque {n}",
  "nimmt.rows": "Rangées", "nimmt.hand": "Votre main", "nimmt.takeRow": "Prendre la rangée {n}",
  "nimmt.chooseRow": "Votre carte est plus faible que toutes les rangées : choisissez une rangée à prendre.",
  "nimmt.selected": "a choisi", "nimmt.selecting": "choisit…", "nimmt.penalty": "Têtes de bœuf",
  "nimmt.turn": "Tour {n} sur 10", "nimmt.yourPick": "Votre carte : {card}", "nimmt.revealed": "Révélées",
  "nimmt.draft": "Draft : prenez une carte", "nimmt.row": "Rangée {n}", "nimmt.pick": "Choisissez une carte à jouer",
  "nimmt.bullheads": "{n} têtes de bœuf", "nimmt.pile": "pile",
  "sk.hand": "Votre main", "sk.trick": "Pli en cours", "sk.lead": "Couleur demandée : {suit}", "sk.noLead": "Pas encore de couleur",
  "sk.bid": "Combien de plis allez-vous gagner ?", "sk.bids": "Annonce", "sk.tricks": "Plis", "sk.score": "Score",
  "sk.dealer": "donneur", "sk.hasBid": "a annoncé", "sk.bidding": "annonce…", "sk.as_pirate": "en Pirate",
  "sk.as_escape": "en Fuite", "sk.lastTrick": "Dernier pli remporté par {name}", "sk.play": "Jouez une carte",
  "sk.yourBid": "Votre annonce : {n}",
  "suit.yellow": "Jaune", "suit.red": "Rouge", "suit.blue": "Bleu", "suit.black": "Noir",
  "card.escape": "Fuite", "card.pirate": "Pirate", "card.mermaid": "Sirène", "card.scary-mary": "Scary Mary",
  "card.skull-king": "Skull King",
  "replay.title": "Rediffusion", "replay.first": "Début", "replay.prev": "Reculer", "replay.next": "Avancer",
  "replay.last": "Fin", "replay.version": "Étape {v} sur {head}", "replay.hint": "Utilisez ← et → pour avancer.",
  "replay.auditRound": "Audit de la manche {n}", "replay.notFinished": "Une partie se revoit une fois terminée.",
  "replay.seatView": "Vue de {name}",
  "audit.title": "Audit d'équité", "audit.hashChain": "Historique intact (chaîne de hachage)",
  "audit.commitment": "Engagement publié", "audit.round": "Manche {n}", "audit.setup": "Mise en place",
  "audit.seed": "Graine révélée", "audit.serverCheck": "La graine correspond à la chaîne (serveur)",
  "audit.browserCheck": "La graine redescend jusqu'à l'engagement (vérifié dans votre navigateur)",
  "audit.rules": "Les événements suivent les règles", "audit.chance": "Tirages recalculés",
  "audit.passed": "réussi", "audit.failed": "échoué", "audit.pending": "manche en cours",
  "audit.checking": "vérification…", "audit.summary": "{ok} vérifications réussies sur {n}",
  "audit.explain": "Avant toute arrivée, le serveur a publié s₀. Après chaque manche il révèle s_r ; hacher s_r r fois avec SHA-256 doit redonner s₀. Votre navigateur le vérifie ci-dessous.",
  "audit.noCrypto": "Ce navigateur ne peut pas hacher ici (WebCrypto exige https ou localhost).",
  "audit.events": "{n} événements",
};

const tr = {
  "nav.lobby": "Lobi", "nav.api": "API", "nav.language": "Dil",
  "foot.fair": "Kanıtlanabilir adalet: her karıştırma, kimse katılmadan önce taahhüt edilir.",
  "common.loading": "Yükleniyor…", "common.yes": "evet", "common.no": "hayır", "common.none": "yok",
  "lobby.hero": "Arkadaşlarla kart ve blöf oyunları, tasarımı gereği adil.",
  "lobby.create": "Yeni masa", "lobby.game": "Oyun", "lobby.players": "Oyuncular",
  "lobby.options": "Masa seçenekleri", "lobby.seed": "Alıştırma tohumu",
  "lobby.seedHelp": "İsteğe bağlı, 64 onaltılık karakter: aynı tohum aynı kartları dağıtır.",
  "lobby.random": "Rastgele", "lobby.name": "Adınız",
  "lobby.clientSeed": "Entropiniz (isteğe bağlı)",
  "lobby.clientSeedHelp": "En fazla 64 karakterlik bir metin; her karıştırmaya katılır.",
  "lobby.createBtn": "Oluştur ve otur", "lobby.open": "Masalar", "lobby.none": "Henüz açık masa yok. Bir tane başlatın!",
  "lobby.join": "Katıl", "lobby.spectate": "İzle", "lobby.bots": "Boş yerleri botlarla doldur",
  "lobby.seats": "{taken}/{seats} yer", "lobby.practice": "alıştırma", "lobby.unset": "(ayarlanmadı)",
  "lobby.nameRequired": "Lütfen adınızı girin.", "lobby.botsMissing": "Botlar bu sunucuda henüz yok.",
  "lobby.host": "sizin masanız",
  "status.waiting": "Oyuncu bekleniyor", "status.playing": "Oynanıyor", "status.finished": "Bitti",
  "table.round": "{n}. tur", "table.roundOf": "Tur {n} / {total}", "table.yourTurn": "Sıra sizde",
  "table.waitingFor": "Bekleniyor: {names}", "table.you": "siz", "table.timeLeft": "{s} sn",
  "table.log": "Masa günlüğü", "table.scores": "Puanlar", "table.won": "Kazanan: {names}!", "table.gameOver": "Oyun bitti",
  "table.replay": "Tekrarı izle", "table.audit": "Adaleti denetle", "table.join": "Yer al",
  "table.joinBtn": "Otur", "table.spectating": "Bu masayı izliyorsunuz.",
  "table.share": "Arkadaşlarınızı davet edin: bu sayfanın adresini gönderin.", "table.bot": "bot", "table.left": "ayrıldı",
  "table.leave": "Masadan ayrıl", "table.seatsTaken": "{seats} yerden {taken} dolu",
  "table.reconnecting": "Yeniden bağlanılıyor…", "table.notFound": "Böyle bir masa yok.", "table.seat": "Yer {n}",
  "table.emptySeat": "boş yer", "table.practice": "Alıştırma masası", "table.final": "Son puanlar",
  "skull.hand": "Diskleriniz", "skull.flower": "Çiçek", "skull.skull": "Kafatası", "skull.last_chance": "Son şans",
  "skull.place": "Disk koy", "skull.bid": "Teklif ver", "skull.pass": "Pas", "skull.flip": "Çevir",
  "skull.stack": "matta {n}", "skull.discs": "{n} disk", "skull.points": "{n}/2 puan",
  "skull.passed": "pas geçti", "skull.eliminated": "elendi", "skull.challenge": "{name} {n} çiçek çevirmeli",
  "skull.bidBy": "En yüksek teklif: {n} ({name})", "skull.discardPick": "{name} oyuncusunun kapalı disklerinden birini seçin",
  "skull.discardOwn": "Kaybedeceğiniz diski seçin", "skull.chooseFirst": "Sonraki turu kimin başlatacağını seçin",
  "skull.lost": "Kaybedilen", "skull.flipsLeft": "çevrilecek {n}", "skull.raise": "Teklifi aç veya yükselt",
  "skull.onMats": "matlarda {n} disk", "skull.yourStack": "Yığınınız (alttan üste)",
  "skull.flipHint": "Üstteki diski çevirmek için bir yığın seçin", "skull.position": "Disk {n}",
  "nimmt.rows": "Sıralar", "nimmt.hand": "Eliniz", "nimmt.takeRow": "{n}. sırayı al",
  "nimmt.chooseRow": "Kartınız tüm sıralardan düşük: alacağınız sırayı seçin.",
  "nimmt.selected": "seçti", "nimmt.selecting": "seçiyor…", "nimmt.penalty": "Boğa başı",
  "nimmt.turn": "El {n} / 10", "nimmt.yourPick": "Kartınız: {card}", "nimmt.revealed": "Açılanlar",
  "nimmt.draft": "Seçim: bir kart alın", "nimmt.row": "Sıra {n}", "nimmt.pick": "Oynamak için bir kart seçin",
  "nimmt.bullheads": "{n} boğa başı", "nimmt.pile": "yığın",
  "sk.hand": "Eliniz", "sk.trick": "Oynanan el", "sk.lead": "İstenen renk: {suit}", "sk.noLead": "Henüz renk yok",
  "sk.bid": "Kaç el alacaksınız?", "sk.bids": "Tahmin", "sk.tricks": "El", "sk.score": "Puan",
  "sk.dealer": "dağıtan", "sk.hasBid": "tahmin verdi", "sk.bidding": "tahmin ediyor…", "sk.as_pirate": "Korsan olarak",
  "sk.as_escape": "Kaçış olarak", "sk.lastTrick": "Son eli {name} aldı", "sk.play": "Bir kart oynayın",
  "sk.yourBid": "Tahmininiz: {n}",
  "suit.yellow": "Sarı", "suit.red": "Kırmızı", "suit.blue": "Mavi", "suit.black": "Siyah",
  "card.escape": "Kaçış", "card.pirate": "Korsan", "card.mermaid": "Deniz kızı", "card.scary-mary": "Scary Mary",
  "card.skull-king": "Skull King",
  "replay.title": "Tekrar", "replay.first": "Baş", "replay.prev": "Geri", "replay.next": "İleri",
  "replay.last": "Son", "replay.version": "Adım {v} / {head}", "replay.hint": "Adım adım gitmek için ← ve → tuşları.",
  "replay.auditRound": "{n}. turun denetimi", "replay.notFinished": "Bir oyun bittikten sonra tekrar izlenebilir.",
  "replay.seatView": "{name} görünümü",
  "audit.title": "Adalet denetimi", "audit.hashChain": "Geçmiş bozulmamış (özet zinciri)",
  "audit.commitment": "Yayımlanan taahhüt", "audit.round": "{n}. tur", "audit.setup": "Hazırlık",
  "audit.seed": "Açıklanan tohum", "audit.serverCheck": "Tohum zincire uyuyor (sunucu)",
  "audit.browserCheck": "Tohum taahhüde iniyor (tarayıcınızda denetlendi)",
  "audit.rules": "Olaylar kurallara uygun", "audit.chance": "Şans sonuçları yeniden hesaplandı",
  "audit.passed": "geçti", "audit.failed": "kaldı", "audit.pending": "tur bitmedi",
  "audit.checking": "denetleniyor…", "audit.summary": "{n} denetimden {ok} tanesi geçti",
  "audit.explain": "Kimse katılmadan önce sunucu s₀'ı yayımladı. Her turdan sonra s_r'yi açıklar; s_r'ye r kez SHA-256 uygulamak s₀'ı vermelidir. Tarayıcınız bunu aşağıda denetler.",
  "audit.noCrypto": "Bu tarayıcı burada özet hesaplayamıyor (WebCrypto https veya localhost ister).",
  "audit.events": "{n} olay",
};

export const CATALOGS = { en, pl, fr, tr };
export const LANGUAGES = Object.keys(CATALOGS);
const KEY = "tablestream.lang";
const listeners = new Set();
let current = initial();

function initial() {
  try {
    const saved = localStorage.getItem(KEY);
    if (saved && CATALOGS[saved]) return saved;
  } catch { /* storage may be off */ }
  for (const tag of navigator.languages || [navigator.language || "en"]) {
    const base = String(tag).slice(0, 2).toLowerCase();
    if (CATALOGS[base]) return base;
  }
  return "en";
}

export function lang() {
  return current;
}

export function setLang(next) {
  if (!CATALOGS[next] || next === current) return;
  current = next;
  try { localStorage.setItem(KEY, next); } catch { /* storage may be off */ }
  applyStatic();
  for (const listener of listeners) listener(next);
}

export function onLangChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function t(key, vars = {}) {
  const text = CATALOGS[current][key] ?? en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => (name in vars ? String(vars[name]) : `{${name}}`));
}

export function has(key) {
  return key in CATALOGS[current] || key in en;
}

export function applyStatic() {
  document.documentElement.lang = current;
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  const select = document.getElementById("lang-select");
  if (select) select.value = current;
}
