// The lobby: create a table of any game (form built from GET /games/options), list and join tables,
// register or log in (a logged-in browser sits down as its account).
import { games, ApiError } from "./api.js";
import { t, onLangChange } from "./i18n.js";
import { TITLES } from "./names.js";
import { choiceLabel, optionHelp, optionLabel } from "./option_texts.js";
import { h, mount, randomHex, store, toast } from "./ui.js";
import { navigate } from "./app.js";
import { followLobby } from "./lobby_live.js";
import { account, accountError, joinRefused, login, logout, onAccountChange, playerHref, register, setPassword,
  whoami } from "./account.js";

const BLURBS = {
  skull: "✿ ☠",
  "six-nimmt": "104 · ▼",
  "skull-king": "☀ ♥ ⚓ ☠ ♛",
};

export function hosted() {
  return store("tablestream.hosted") || [];
}

export function rememberHosted(id) {
  store("tablestream.hosted", [id, ...hosted().filter((x) => x !== id)].slice(0, 50));
}

export async function fillWithBots(id) {
  try {
    await games.bots(id);
  } catch (error) {
    toast(error instanceof ApiError && error.status === 404 ? t("lobby.botsMissing") : error.message);
  }
}

/** A translated sentence with an element in place of one of its {placeholders}. */
function around(key, name, element) {
  const mark = "\u0001";
  const [before, after = ""] = t(key, { [name]: mark }).split(mark);
  return [before, element, after];
}

export async function render(main) {
  let schema = null;
  let selected = store("tablestream.game") || "skull";
  let latest = null; // the lobby as its live stream last gave it (lobby_live.js)
  let accountMode = "register"; // which form the logged-out account box shows: "register" or "login"
  const formBox = h("section", { class: "panel create", "aria-labelledby": "create-title" });
  const accountBox = h("section", { class: "panel account", "aria-labelledby": "account-title",
    "data-testid": "account" });
  const listBox = h("section", { class: "panel tables", "aria-labelledby": "tables-title" });

  function draw() {
    mount(main,
      h("div", { class: "hero" }, h("h1", { text: "Tablestream" }), h("p", { text: t("lobby.hero") })),
      h("div", { class: "lobby-grid" }, formBox, h("div", { class: "lobby-side" }, accountBox, listBox)));
    drawAccount();
    drawForm();
    drawList();
  }

  // -- the account box: register / log in, or who you are ------------------------------------------

  function drawAccount() {
    const me = account();
    const title = h("h2", { id: "account-title", text: t("account.title") });
    if (me) return mount(accountBox, title, signedIn(me));
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

  function signedIn(me) {
    const ratings = Object.entries(me.ratings || {});
    const parts = [
      h("p", { class: "signed-in", "data-testid": "signed-in" }, around("account.signedInAs", "name",
        h("a", { href: playerHref(me.name), "data-nav": "", class: "me-name", text: me.name }))),
      ratings.length ? h("ul", { class: "rating-chips", "aria-label": t("account.ratings") },
        ratings.map(([game, r]) => h("li", { class: "chip" }, h("span", { text: TITLES[game] || game }),
          h("strong", { text: r.rating.toFixed(1) })))) : h("p", { class: "help spaced", text: t("account.noRatings") }),
    ];
    if (me.has_password === false) parts.push(passwordForm());
    parts.push(h("p", { class: "account-actions" },
      h("a", { class: "button small", href: playerHref(me.name), "data-nav": "", text: t("account.yourGames") }),
      h("a", { class: "button small", href: `/rankings/${selected}`, "data-nav": "", text: t("nav.leaderboards") }),
      h("button", { type: "button", class: "small ghost", "data-testid": "logout", text: t("account.logout"),
        onclick: async () => {
          try { await logout(); } catch (problem) { toast(problem.message); }
        } })));
    return parts;
  }

  function passwordForm() {
    const error = h("p", { class: "form-error", role: "alert", hidden: true });
    const form = h("form", { class: "password-form", onsubmit: async (event) => {
      event.preventDefault();
      const password = form.elements.password.value;
      if (password.length < 8) {
        error.textContent = t("account.err.invalid_password");
        error.hidden = false;
        return form.elements.password.focus();
      }
      try {
        await setPassword(password);
        toast(t("account.passwordSaved"), "ok");
      } catch (problem) {
        error.textContent = accountError(problem);
        error.hidden = false;
      }
    } },
      h("p", { class: "note", text: t("account.noPassword") }),
      h("label", { class: "sr-only", for: "new-password", text: t("account.newPassword") }),
      h("div", { class: "inline" },
        h("input", { id: "new-password", name: "password", type: "password", minlength: 8, maxlength: 256,
          autocomplete: "new-password", placeholder: t("account.newPassword") }),
        h("button", { type: "submit", class: "small", text: t("account.setPassword") })),
      error);
    return form;
  }

  function optionField(option) {
    const id = `opt-${option.name}`;
    const label = h("label", { for: id, class: "opt-name", text: optionLabel(option) });
    const help = h("p", { class: "help", text: optionHelp(option) });
    let input;
    if (option.type === "boolean") {
      input = h("input", { id, type: "checkbox", name: option.name, checked: option.default === true });
      return h("div", { class: "field check" }, input, label, help);
    }
    if (option.type === "choice") {
      input = h("select", { id, name: option.name },
        option.values.map((v) => h("option", { value: v, selected: v === option.default, text: choiceLabel(option, v) })));
    } else {
      input = h("input", { id, name: option.name, type: option.type === "integer" ? "number" : "text",
        inputmode: option.type === "integer" ? "numeric" : null,
        min: option.minimum ?? null, max: option.maximum ?? null,
        value: option.default ?? "", placeholder: option.nullable ? t("lobby.unset") : null });
    }
    return h("div", { class: "field" }, label, input, help);
  }

  function drawForm() {
    if (!schema) return mount(formBox, h("p", { text: t("common.loading") }));
    const game = schema.games.find((g) => g.game === selected) || schema.games[0];
    const players = game.players;
    const maxPlayers = players.max_with_two_sets || players.max;
    const me = account();
    const name = me
      ? h("p", { id: "name", class: "as-account", "data-testid": "playing-as" }, h("strong", { text: me.name }),
        h("span", { class: "badge host", text: t("account.badge") }))
      : h("input", { id: "name", name: "name", required: true, maxlength: 40, autocomplete: "nickname",
        value: store("tablestream.name") || "" });
    const form = h("form", { class: "create-form", "data-testid": "create-form", onsubmit: create },
      h("fieldset", { class: "games" }, h("legend", { text: t("lobby.game") }),
        schema.games.map((g) => h("label", { class: "game-choice" + (g.game === game.game ? " on" : "") },
          h("input", { type: "radio", name: "game", value: g.game, checked: g.game === game.game,
            onchange: () => { selected = g.game; store("tablestream.game", selected); drawForm(); } }),
          h("span", { class: "game-title", text: g.title }),
          h("span", { class: "game-blurb", "aria-hidden": "true", text: BLURBS[g.game] || "" }),
          h("span", { class: "game-players", text: `${g.players.min}–${g.players.max_with_two_sets || g.players.max}` })))),
      h("div", { class: "row2" },
        h("div", { class: "field" }, me ? h("span", { class: "label", text: t("account.playingAs") })
          : h("label", { for: "name", text: t("lobby.name") }), name),
        h("div", { class: "field" }, h("label", { for: "players", text: t("lobby.players") }),
          h("input", { id: "players", name: "players", type: "number", min: players.min, max: maxPlayers,
            value: Math.max(players.min, Math.min(players.max, 3)), required: true }))),
      h("details", { class: "options" }, h("summary", { text: t("lobby.options") }),
        game.options.map(optionField),
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
        h("label", { class: "sr-only", for: `js-${g.game_id}`, text: t("lobby.clientSeed") }),
        h("input", { id: `js-${g.game_id}`, name: "client_seed", placeholder: t("lobby.clientSeed"), maxlength: 64 }),
        h("button", { type: "submit", class: "primary small", text: t("table.joinBtn") }));
      return h("li", { class: "table-row", "data-game-id": g.game_id },
        h("div", { class: "table-info" },
          h("span", { class: "game-title", text: TITLES[g.game] || g.game }),
          h("span", { class: `badge ${g.status}`, text: t("status." + g.status) }),
          g.practice ? h("span", { class: "badge", text: t("lobby.practice") }) : null,
          mine.has(g.game_id) ? h("span", { class: "badge host", text: t("lobby.host") }) : null,
          h("span", { class: "muted", text: t("lobby.seats", { taken: g.seats_taken, seats: g.seats }) })),
        h("div", { class: "table-actions" },
          open ? h("button", { class: "primary small", text: t("lobby.join"),
            onclick: () => {
              joinForm.hidden = !joinForm.hidden;
              if (!joinForm.hidden) (joinForm.elements.name || joinForm.elements.client_seed).focus();
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
  try {
    schema = await games.options();
  } catch (error) {
    toast(error.message);
  }
  drawForm();
  const off = onLangChange(draw);
  // Logging in or out changes the account box, the create form's name and the join forms.
  const offAccount = onAccountChange(() => { drawAccount(); drawForm(); drawList(); });
  whoami();
  return () => { stopLive(); off(); offAccount(); };
}
