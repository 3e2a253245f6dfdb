// The table options as a person reads them: names, one-line explanations and choices from the
// glossary (opt.<name>, opt.<name>.help, opt.<name>.<value>, in the four languages of the
// rulebooks), and the form fields the lobby builds from GET /games/options. An option the glossary
// does not know yet shows the server's own English words.
import { has, t } from "./i18n.js";
import { h } from "./ui.js";

/** The option's name as a person reads it. */
export function optionLabel(option) {
  return has(`opt.${option.name}`) ? t(`opt.${option.name}`) : option.name.replaceAll("_", " ");
}

/** The option's one-line explanation. */
export function optionHelp(option) {
  return has(`opt.${option.name}.help`) ? t(`opt.${option.name}.help`) : option.description;
}

/** The words for one of a choice option's values. */
export function choiceLabel(option, value) {
  return has(`opt.${option.name}.${value}`) ? t(`opt.${option.name}.${value}`) : String(value);
}

// Seats are 0-based on the wire and counted from 1 wherever a person reads them: the first player is
// chosen among "Seat 1 (you)", "Seat 2", ... and sent as 0, 1, ...; empty leaves it to fair chance.
const SEAT_OPTIONS = new Set(["first_player"]);

/** Fill a seat option's menu for a table of `players`, keeping the chosen seat when it still exists. */
export function seatChoices(select, players) {
  const kept = select.value;
  select.replaceChildren(h("option", { value: "", text: t("lobby.firstRandom") }),
    ...Array.from({ length: players }, (_, seat) => h("option", { value: String(seat),
      text: seat === 0 ? t("lobby.seatYou", { n: 1 }) : t("table.seat", { n: seat + 1 }) })));
  select.value = Number(kept) < players ? kept : "";
}

/** One option's field: a checkbox, a menu of choices or seats, or a number or text input. */
export function optionField(option, { players }) {
  const id = `opt-${option.name}`;
  const label = h("label", { for: id, class: "opt-name", text: optionLabel(option) });
  const help = h("p", { class: "help", id: `${id}-help`, text: optionHelp(option) });
  const described = `${id}-help`;
  let input;
  if (option.type === "boolean") {
    input = h("input", { id, type: "checkbox", name: option.name, checked: option.default === true,
      "aria-describedby": described });
    return h("div", { class: "field check" }, input, label, help);
  }
  if (SEAT_OPTIONS.has(option.name) && option.type === "integer") {
    input = h("select", { id, name: option.name, "aria-describedby": described, "data-seats": "" });
    seatChoices(input, players);
  } else if (option.type === "choice") {
    input = h("select", { id, name: option.name, "aria-describedby": described },
      option.values.map((v) => h("option", { value: v, selected: v === option.default, text: choiceLabel(option, v) })));
  } else {
    input = h("input", { id, name: option.name, type: option.type === "integer" ? "number" : "text",
      inputmode: option.type === "integer" ? "numeric" : null, "aria-describedby": described,
      min: option.minimum ?? null, max: option.maximum ?? null,
      value: option.default ?? "", placeholder: option.nullable ? t("lobby.unset") : null });
  }
  return h("div", { class: "field" }, label, input, help);
}
