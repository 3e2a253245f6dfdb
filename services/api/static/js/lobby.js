// The lobby: create a table of any game (form built from GET /games/options), list and join tables,
// register or log in (a logged-in browser sits down as its account).
import { games, ApiError } from "./api.js";
import { t, onLangChange } from "./i18n.js";
import { blurb, gameTitle, loadGames } from "./game_info.js";
import { turnBasedChoice } from "./lobby_turn_based.js";
import { optionField, seatChoices } from "./option_texts.js";
import { h, mount, randomHex, store, toast } from "./ui.js";
import { navigate } from "./router.js";
import { followLobby } from "./lobby_live.js";
import { closeQuickPlay, quickPlayPanel, resumeQuickPlay } from "./quickplay.js";
import { fillWithBots, hosted, rememberHosted } from "./hosted.js";
import { account, accountError, joinRefused, login, logout, onAccountChange, playerHref, register, setPassword,
  whoami } from "./account.js";

/** A game's player counts in words: "3–6 players (up to 12 with two boxes)". */
function playersText({ min, max, max_with_two_sets: more }) {
  return more ? t("lobby.playersRangeMore", { min, max, more }) : t("lobby.playersRange", { min, max });
}

/** A translated sentence with an element in place of one of its {placeholders}. */
function around(key, name, element) {
  const mark = "\u0001";
  const [before, after = ""] = t(key, { [name]: mark }).split(mark);
  return [before, element, after];
}

export async function render(main) {
  let schema = null;
  let selected = store("tablestream.game"); // else the first game the server lists (drawForm)
  let latest = null; // the lobby as its live stream last gave it (lobby_live.js)
  let accountMode = "register"; // which form the logged-out account box shows: "register" or "login"
  const formBox = h("section", { class: "panel create", "aria-labelledby": "create-title" });
  const accountBox = h("section", { class: "panel account", "aria-labelledby": "account-title",
    "data-testid": "account" });
  const listBox = h("section", { class: "panel tables", "aria-labelledby": "tables-title" });
  const quickBox = h("div", { class: "quick-box" }); // quick play's "Play now" (quickplay.js)

  function draw() {
    mount(main,
      h("div", { class: "hero" }, h("h1", { text: "Tablestream" }), h("p", { text: t("lobby.hero") })),
      quickBox,
      h("div", { class: "lobby-grid" }, formBox, h("div", { class: "lobby-side" }, accountBox, listBox)));
    drawQuick();
    drawAccount();
    drawForm();
    drawList();
  }

  // -- the account box: register / log in, or who you are ------------------------------------------

  function drawAccount() {
    const me = account();
    const title = h("h2", { id: "account-title", text: t("account.title") });
    if (me) return mount(accountBox, title, signedIn(me));
    const typed = typing(); // a redraw (a language, a mode, an account check) keeps what is being typed
    const error = h("p", { class: "form-error", role: "alert", "data-testid": "account-error", hidden: true });
    const registering = accountMode === "register";
    const form = h("form", { class: "account-form", "data-testid": `${accountMode}-form`, onsubmit: submit, novalidate: true },
      h("div", { class: "field" }, h("label", { for: "account-name", text: t("account.name") }),
        h("input", { id: "account-name", name: "name", required: true, minlength: 2, maxlength: 24,
          autocomplete: "username", value: store("tablestream.name") || "",
          "aria-describedby": registering ? "account-name-help" : null }),
        registering ? h("p", { class: "help", id: "account-name-help", text: t("account.nameHelp") }) : null),
      h("div", { class: "field" },
        h("label", { for: "account-password", text: registering ? t("account.passwordOptional") : t("account.password") }),
        h("input", { id: "account-password", name: "password", type: "password", minlength: 8, maxlength: 256,
          required: !registering, autocomplete: registering ? "new-password" : "current-password",
          "aria-describedby": registering ? "account-password-help" : null }),
        registering ? h("p", { class: "help", id: "account-password-help", text: t("account.passwordHelp") }) : null),
      error,
      h("button", { type: "submit", class: "primary", "data-testid": `${accountMode}-submit`,
        text: registering ? t("account.registerBtn") : t("account.loginBtn") }));
    const tab = (mode, label) => h("button", { type: "button", class: "seg" + (accountMode === mode ? " on" : ""),
      "aria-pressed": accountMode === mode ? "true" : "false", "data-testid": `account-${mode}`, text: label,
      onclick: () => { accountMode = mode; drawAccount(); accountBox.querySelector("#account-name").focus(); } });
    mount(accountBox, title,
      h("p", { class: "help lead", text: t("account.why") }),
      h("div", { class: "segmented", role: "group", "aria-label": t("account.title") },
        tab("register", t("account.register")), tab("login", t("account.login"))),
      form);
    if (typed) {
      form.elements.name.value = typed.name;
      form.elements.password.value = typed.password;
      const field = typed.focused && form.elements[typed.focused];
      if (field) {
        field.focus();
        field.setSelectionRange(typed.caret, typed.caret);
      }
    }

    async function submit(event) {
      event.preventDefault();
      const name = form.elements.name.value.trim();
      const password = form.elements.password.value;
      const fail = (message, field) => {
        error.textContent = message;
        error.hidden = false;
        if (field) form.elements[field].focus();
      };
      if (name.length < 2) return fail(t("account.err.invalid_name"), "name");
      if (registering ? password && password.length < 8 : !password) return fail(t("account.err.invalid_password"), "password");
      const button = form.querySelector("button[type=submit]");
      button.disabled = true;
      try {
        if (registering) await register(name, password || null);
        else await login(name, password);
        store("tablestream.name", name);
      } catch (problem) {
        button.disabled = false;
        fail(accountError(problem), problem instanceof ApiError && problem.code === "invalid_credentials" ? "password" : "name");
      }
    }
  }

  // The logged-out form's fields as the person left them: values, the focused field and its caret.
  function typing() {
    const form = accountBox.querySelector("form.account-form");
    if (!form) return null;
    const active = document.activeElement;
    const focused = active && form.contains(active) && active.name ? active.name : null;
    return { name: form.elements.name.value, password: form.elements.password.value, focused,
      caret: focused ? active.selectionStart ?? active.value.length : 0 };
  }

  function signedIn(me) {
    const ratings = Object.entries(me.ratings || {});
    const parts = [
      h("p", { class: "signed-in", "data-testid": "signed-in" }, around("account.signedInAs", "name",
        h("a", { href: playerHref(me.name), "data-nav": "", class: "me-name", text: me.name }))),
      ratings.length ? h("ul", { class: "rating-chips", "aria-label": t("account.ratings") },
        ratings.map(([game, r]) => h("li", { class: "chip" }, h("span", { text: gameTitle(game) }),
          h("strong", { text: r.rating.toFixed(1) })))) : h("p", { class: "help spaced", text: t("account.noRatings") }),
    ];
    if (me.has_password === false) parts.push(passwordForm(false));
    else if (me.has_password === true) parts.push(h("details", { class: "change-password" },
      h("summary", { "data-testid": "change-password", text: t("account.changePassword") }), passwordForm(true)));
    parts.push(h("p", { class: "account-actions" },
      h("a", { class: "button small", href: playerHref(me.name), "data-nav": "", text: t("account.yourGames") }),
      h("a", { class: "button small", href: selected ? `/rankings/${selected}` : "/rankings", "data-nav": "", text: t("nav.leaderboards") }),
      h("button", { type: "button", class: "small ghost", "data-testid": "logout", text: t("account.logout"),
        onclick: async () => {
          try { await logout(); } catch (problem) { toast(problem.message); }
        } })));
    return parts;
  }

  // hasOne: the account has a password, so changing it asks for the current one too.
  function passwordForm(hasOne) {
    const error = h("p", { class: "form-error", role: "alert", hidden: true });
    const fail = (message, field) => {
      error.textContent = message;
      error.hidden = false;
      form.elements[field].focus();
    };
    const form = h("form", { class: "password-form", "data-testid": "password-form", onsubmit: async (event) => {
      event.preventDefault();
      const password = form.elements.password.value;
      const current = hasOne ? form.elements.current.value : null;
      if (hasOne && !current) return fail(t("account.err.current_password_required"), "current");
      if (password.length < 8) return fail(t("account.err.invalid_password"), "password");
      try {
        await setPassword(password, current);
        toast(t(hasOne ? "account.passwordChanged" : "account.passwordSaved"), "ok");
        form.reset();
      } catch (problem) {
        const field = problem instanceof ApiError && /current_password/.test(problem.code) ? "current" : "password";
        fail(accountError(problem), field);
      }
    } },
      hasOne ? null : h("p", { class: "note", text: t("account.noPassword") }),
      hasOne ? h("label", { class: "sr-only", for: "current-password", text: t("account.currentPassword") }) : null,
      hasOne ? h("input", { id: "current-password", name: "current", type: "password", maxlength: 256,
        autocomplete: "current-password", placeholder: t("account.currentPassword") }) : null,
      h("label", { class: "sr-only", for: "new-password", text: t("account.newPassword") }),
      h("div", { class: "inline" },
        h("input", { id: "new-password", name: "password", type: "password", minlength: 8, maxlength: 256,
          autocomplete: "new-password", placeholder: t("account.newPassword") }),
        h("button", { type: "submit", class: "small", "data-testid": "password-submit",
          text: hasOne ? t("account.changePassword") : t("account.setPassword") })),
      error);
    return form;
  }

  function drawQuick() {
    if (!schema) return mount(quickBox);
    const quickName = h("input", { id: "qp-name", name: "name", maxlength: 40, autocomplete: "nickname",
      value: store("tablestream.name") || "" });
    const panel = quickPlayPanel(schema, () => (account() ? null : quickName.value.trim()));
    if (!account()) panel.querySelector(".qp-games").before(h("div", { class: "field qp-name" },
      h("label", { for: "qp-name", text: t("lobby.name") }), quickName));
    mount(quickBox, panel);
  }

  function drawForm() {
    if (!schema) return mount(formBox, h("p", { text: t("common.loading") }));
    const game = schema.games.find((g) => g.game === selected) || schema.games[0];
    const players = game.players;
    const start = Math.max(players.min, Math.min(players.max, 3)); // the player count first offered
    const me = account();
    const name = me
      ? h("p", { id: "name", class: "as-account", "data-testid": "playing-as" }, h("strong", { text: me.name }),
        h("span", { class: "badge host", text: t("account.badge") }))
      : h("input", { id: "name", name: "name", required: true, maxlength: 40, autocomplete: "nickname",
        value: store("tablestream.name") || "" });
    const form = h("form", { class: "create-form", "data-testid": "create-form", onsubmit: create },
      h("fieldset", { class: "games" }, h("legend", { text: t("lobby.game") }),
        schema.games.map((g) => h("div", { class: "game-card" },
          h("label", { class: "game-choice" + (g.game === game.game ? " on" : "") },
            h("input", { type: "radio", name: "game", value: g.game, checked: g.game === game.game,
              onchange: () => { selected = g.game; store("tablestream.game", selected); drawForm(); } }),
            h("span", { class: "game-title", text: gameTitle(g.game) }),
            h("span", { class: "game-blurb", "aria-hidden": "true", text: blurb(g.game) }),
            h("span", { class: "game-players", text: playersText(g.players) })),
          h("a", { class: "game-rules", href: `/rules/${g.game}`, "data-nav": "", "data-testid": `rules-${g.game}`,
            "aria-label": t("lobby.rulesOf", { game: gameTitle(g.game) }), text: t("lobby.rules") })))),
      h("div", { class: "row2" },
        h("div", { class: "field" }, me ? h("span", { class: "label", text: t("account.playingAs") })
          : h("label", { for: "name", text: t("lobby.name") }), name),
        h("div", { class: "field" }, h("label", { for: "players", text: t("lobby.players") }),
          h("input", { id: "players", name: "players", type: "number", min: players.min, max: players.max,
            value: start, required: true, "aria-describedby": "players-help",
            oninput: followPlayers }),
          h("p", { class: "help", id: "players-help" }))),
      h("details", { class: "options" }, h("summary", { text: t("lobby.options") }),
        game.options.map((option) => optionField(option, { players: start }))),
      // Jargon most players never need: the practice seed and their own share of the randomness.
      h("details", { class: "advanced", "data-testid": "advanced" }, h("summary", { text: t("lobby.advanced") }),
        h("p", { class: "help lead", text: t("lobby.advancedHelp") }),
        h("div", { class: "field" }, h("label", { for: "seed", text: t("lobby.seed") }),
          h("div", { class: "inline" },
            h("input", { id: "seed", name: "seed", pattern: "[0-9a-f]{64}", maxlength: 64, spellcheck: "false",
              class: "mono" }),
            h("button", { type: "button", class: "ghost", text: t("lobby.random"),
              onclick: () => { form.elements.seed.value = randomHex(32); } })),
          h("p", { class: "help", text: t("lobby.seedHelp") })),
        h("div", { class: "field" }, h("label", { for: "client-seed", text: t("lobby.clientSeed") }),
          h("input", { id: "client-seed", name: "client_seed", maxlength: 64 }),
          h("p", { class: "help", text: t("lobby.clientSeedHelp") }))),
      h("button", { type: "submit", class: "primary", "data-testid": "create", text: t("lobby.createBtn") }));
    mount(formBox, h("h2", { id: "create-title", text: t("lobby.create") }), form);
    if (form.elements.two_sets) form.elements.two_sets.addEventListener("change", followPlayers);
    turnBasedChoice(form);
    followPlayers();

    // The player count follows the options (Skull takes up to 12 with two boxes), and the seats
    // offered as first player follow the player count.
    function followPlayers() {
      const more = players.max_with_two_sets;
      const max = more && form.elements.two_sets?.checked ? more : players.max;
      const field = form.elements.players;
      field.max = String(max);
      if (Number(field.value) > max) field.value = String(max);
      form.querySelector("#players-help").textContent = more && max !== more
        ? t("lobby.playersHelpMore", { min: players.min, max, more, option: t("opt.two_sets") })
        : t("lobby.playersHelp", { min: players.min, max });
      const count = Math.max(players.min, Math.min(max, Number(field.value) || players.min));
      for (const select of form.querySelectorAll("select[data-seats]")) seatChoices(select, count);
    }

    async function create(event) {
      event.preventDefault();
      const data = form.elements;
      const who = me ? null : data.name.value.trim(); // an account sits down under its own name
      if (!me && !who) return toast(t("lobby.nameRequired"));
      if (who) store("tablestream.name", who);
      const options = {};
      for (const option of game.options) {
        const input = data[option.name];
        if (option.type === "boolean") {
          if (input.checked !== option.default) options[option.name] = input.checked;
        } else if (input.value === "") {
          if (!option.nullable) options[option.name] = option.default;
        } else {
          const value = option.type === "integer" ? Number(input.value) : input.value;
          if (value !== option.default) options[option.name] = value;
        }
      }
      if (data.seed.value) options.seed = data.seed.value.toLowerCase();
      let created;
      try {
        created = await games.create(game.game, Number(data.players.value), options);
        rememberHosted(created.game_id);
      } catch (error) {
        return toast(error.message);
      }
      try {
        await games.join(created.game_id, who, data.client_seed.value || null);
        navigate(`/tables/${created.game_id}`);
      } catch (error) {
        joinRefused(error);
      }
    }
  }

  function drawList(lobby = latest) {
    latest = lobby;
    if (!lobby) return mount(listBox, h("h2", { id: "tables-title", text: t("lobby.open") }),
      h("p", { class: "empty", text: t("common.loading") }));
    const mine = new Set(hosted());
    const me = account();
    const rows = lobby.games.map((g) => {
      const open = g.status === "waiting" && g.seats_taken < g.seats;
      const joinForm = h("form", { class: "join-inline", hidden: true, onsubmit: async (event) => {
        event.preventDefault();
        const who = me ? null : joinForm.elements.name.value.trim();
        if (!me && !who) return toast(t("lobby.nameRequired"));
        if (who) store("tablestream.name", who);
        try {
          await games.join(g.game_id, who, joinForm.elements.client_seed.value || null);
          navigate(`/tables/${g.game_id}`);
        } catch (error) { joinRefused(error); }
      } },
        me ? h("span", { class: "as-account small-text", text: t("account.sitAs", { name: me.name }) }) : [
          h("label", { class: "sr-only", for: `jn-${g.game_id}`, text: t("lobby.name") }),
          h("input", { id: `jn-${g.game_id}`, name: "name", placeholder: t("lobby.name"), maxlength: 40,
            value: store("tablestream.name") || "" })],
        h("button", { type: "submit", class: "primary small", text: t("table.joinBtn") }),
        h("details", { class: "advanced" }, h("summary", { text: t("lobby.advanced") }),
          h("label", { for: `js-${g.game_id}`, text: t("lobby.clientSeed") }),
          h("input", { id: `js-${g.game_id}`, name: "client_seed", maxlength: 64 })));
      return h("li", { class: "table-row", "data-game-id": g.game_id },
        h("div", { class: "table-info" },
          h("span", { class: "game-title", text: gameTitle(g.game) }),
          h("span", { class: `badge ${g.status}`, text: t("status." + g.status) }),
          g.practice ? h("span", { class: "badge", text: t("lobby.practice") }) : null,
          g.turn_based ? h("span", { class: "badge turn-based", "data-testid": "turn-based", text: t("lobby.turnBased") }) : null,
          mine.has(g.game_id) ? h("span", { class: "badge host", text: t("lobby.host") }) : null,
          h("span", { class: "muted", text: t("lobby.seats", { taken: g.seats_taken, seats: g.seats, n: g.seats }) })),
        h("div", { class: "table-actions" },
          open ? h("button", { class: "primary small", text: t("lobby.join"),
            onclick: () => {
              joinForm.hidden = !joinForm.hidden;
              if (!joinForm.hidden) (joinForm.elements.name || joinForm.querySelector("[type=submit]")).focus();
            } }) : null,
          open && mine.has(g.game_id) ? h("button", { class: "small", text: t("lobby.bots"),
            onclick: async () => { await fillWithBots(g.game_id); drawList(); } }) : null,
          h("a", { class: "button small ghost", href: `/tables/${g.game_id}`, "data-nav": "", text: t("lobby.spectate") })),
        joinForm);
    });
    const focused = listBox.contains(document.activeElement);
    if (focused) { // do not yank the list away from someone typing in it: redraw once they leave it
      listBox.addEventListener("focusout", () => setTimeout(() => {
        if (!listBox.contains(document.activeElement)) drawList();
      }), { once: true });
      return;
    }
    mount(listBox, h("h2", { id: "tables-title", text: t("lobby.open") }),
      rows.length ? h("ul", { class: "table-list", "data-testid": "tables" }, rows)
        : h("p", { class: "empty", text: t("lobby.none") }));
  }

  draw();
  const stopLive = followLobby(drawList);
  // Logging in or out changes the account box, the create form's name and the join forms. Listened
  // to before anything is awaited: the page load's account check (app.js) may answer first.
  const offAccount = onAccountChange(() => { drawAccount(); drawQuick(); drawForm(); drawList(); });
  try {
    schema = await loadGames(); // GET /games/options, once per page load (game_info.js)
  } catch (error) {
    toast(error.message);
  }
  drawForm();
  drawQuick();
  drawList(); // the tables' games by their titles, now known
  resumeQuickPlay();
  const off = onLangChange(draw);
  whoami();
  return () => { stopLive(); off(); offAccount(); closeQuickPlay(); };
}
