// Interactive components: Button (the only thing that talks to the agent) and the two-way
// bound inputs TextField, CheckBox, ChoicePicker, Slider, DateTimeInput. Inputs write the
// local data model as the user types; nothing leaves the browser until a Button fires.

import { matches } from "./functions.js";
import { buildAction, callFunction, checksPass, failedChecks, resolve, resolveText } from "./resolve.js";
import { hostOf, safeLinkUrl } from "../media.js";

/** @typedef {import("./normalize.js").Component} Component */
/** @typedef {import("./resolve.js").Scope} Scope */

const ACTION_DEBOUNCE_MS = 600;
let radioGroups = 0;

/** @param {Document} doc @param {string} tag @param {string} [cls] @returns {any} */
function el(doc, tag, cls) {
  const node = doc.createElement(tag);
  if (cls) node.className = cls;
  return node;
}

/** A `<label>` holding the caption and the control. */
function field(/** @type {any} */ ctx, /** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ control) {
  const wrap = el(ctx.doc, "label");
  const caption = el(ctx.doc, "span", "gth-a2ui-caption");
  ctx.bind(caption, () => {
    caption.textContent = resolveText(c.props.label, scope);
  });
  wrap.append(caption, control);
  return wrap;
}

/**
 * Show why an input's value is not valid (its failing `checks`, a `validationRegexp` mismatch)
 * under it, and mark it aria-invalid: once it holds a value or the user has touched it (an
 * empty form does not open full of complaints; its Button is disabled all the same).
 * Re-evaluated whenever the data changes.
 * @param {any} ctx @param {Component} c @param {Scope} scope @param {any} wrap @param {any} control
 */
function validation(ctx, c, scope, wrap, control) {
  const pattern = c.props.validationRegexp;
  if (!Array.isArray(c.props.checks) && typeof pattern !== "string") return;
  const note = el(ctx.doc, "span", "gth-a2ui-invalid");
  note.setAttribute("aria-live", "polite");
  wrap.append(note);
  let touched = false;
  const update = () => {
    const raw = resolve(c.props.value, scope);
    const empty = raw === undefined || raw === null || raw === "" || raw === false || (Array.isArray(raw) && !raw.length);
    const messages = touched || !empty ? failedChecks(c.props.checks, scope) : [];
    if (typeof pattern === "string" && !empty) {
      let ok = false;
      try {
        ok = matches(resolveText(c.props.value, scope), pattern);
      } catch {
        ok = false;
      }
      if (!ok) messages.push("The value does not have the expected format.");
    }
    note.textContent = messages.join(" ");
    note.hidden = !messages.length;
    if (messages.length) control.setAttribute("aria-invalid", "true");
    else control.removeAttribute("aria-invalid");
  };
  for (const type of ["input", "change", "focusout"]) {
    control.addEventListener(type, () => {
      touched = true;
      update();
    });
  }
  ctx.bind(note, update);
}

/** The data path an input writes (normalisation gives every input one). */
function pathOf(/** @type {Component} */ c) {
  const v = c.props.value;
  if (!v || typeof v.path !== "string") throw new Error(`Input '${c.id}' has no data binding.`);
  return v.path;
}

export const INPUTS = {
  Button(/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx, /** @type {Set<string>} */ anc, /** @type {number} */ depth) {
    const node = el(ctx.doc, "button");
    node.setAttribute("type", "button");
    const variant = resolve(c.props.variant, scope);
    if (typeof variant === "string") node.dataset.variant = variant;
    // A button that opens a page says where, whatever its label claims: "↗ host" on its face,
    // the whole address in its tooltip.
    const open = c.props.action?.functionCall?.call === "openUrl" ? c.props.action.functionCall : null;
    const badge = open ? el(ctx.doc, "span", "gth-link-host") : null;
    if (typeof c.props.child === "string") node.append(ctx.child(c.props.child, scope, anc, depth));
    else {
      ctx.bind(node, () => {
        node.textContent = resolveText(c.props.label, scope) || c.props.action?.event?.name || "OK";
        if (badge) node.append(badge);
      });
    }
    if (badge) {
      node.append(badge);
      ctx.bind(badge, () => {
        const url = safeLinkUrl(resolve(open.args?.url, scope));
        badge.textContent = url ? `↗ ${hostOf(url)}` : "(link refused)";
        node.title = url ? `Opens ${url} in a new tab` : "Not opened: only http(s) addresses may be opened.";
      });
    }
    if (Array.isArray(c.props.checks)) {
      ctx.bind(node, () => {
        node.disabled = !checksPass(c.props.checks, scope);
      });
    }
    let last = 0;
    node.addEventListener("click", (/** @type {Event} */ event) => {
      // Only a person's click may speak to the agent: a script-dispatched click is ignored.
      if (!event.isTrusted || node.disabled) return;
      // A click that loads an image placeholder inside the button is for the image only.
      if (/** @type {any} */ (event.target)?.closest?.(".gth-media-placeholder")) return;
      const now = Date.now();
      if (now - last < ACTION_DEBOUNCE_MS) return;
      last = now;
      const action = c.props.action;
      if (action?.functionCall) {
        // A local function sends nothing to the agent; openUrl may open a page (http(s) only).
        try {
          callFunction(action.functionCall, scope, { openUrl: ctx.openUrl });
        } catch (err) {
          node.title = /** @type {Error} */ (err).message;
        }
        return;
      }
      if (action?.event) ctx.onAction(buildAction(c, scope, ctx.now()));
    });
    return node;
  },

  TextField(/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx) {
    const variant = String(resolve(c.props.variant, scope) ?? "shortText");
    const input = el(ctx.doc, variant === "longText" ? "textarea" : "input", "gth-a2ui-input");
    if (variant !== "longText") {
      const types = { number: "number", obscured: "password", date: "date" };
      input.setAttribute("type", /** @type {any} */ (types)[variant] || "text");
    }
    const placeholder = resolveText(c.props.placeholder, scope);
    if (placeholder) input.setAttribute("placeholder", placeholder);
    const path = pathOf(c);
    ctx.bind(input, () => {
      input.value = resolveText(c.props.value, scope);
    });
    input.addEventListener("input", () => {
      const raw = input.value;
      const value = variant === "number" && raw !== "" && Number.isFinite(Number(raw)) ? Number(raw) : raw;
      ctx.write(path, value, scope, input);
    });
    const wrap = field(ctx, c, scope, input);
    validation(ctx, c, scope, wrap, input); // refreshed on every write, typing included
    return wrap;
  },

  CheckBox(/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx) {
    const input = el(ctx.doc, "input", "gth-a2ui-input");
    input.setAttribute("type", "checkbox");
    const path = pathOf(c);
    ctx.bind(input, () => {
      input.checked = Boolean(resolve(c.props.value, scope));
    });
    input.addEventListener("change", () => ctx.write(path, Boolean(input.checked), scope, input));
    const wrap = field(ctx, c, scope, input);
    wrap.prepend(input); // box before its caption
    validation(ctx, c, scope, wrap, input);
    return wrap;
  },

  ChoicePicker(/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx) {
    const node = el(ctx.doc, "fieldset");
    const legend = el(ctx.doc, "legend");
    ctx.bind(legend, () => {
      legend.textContent = resolveText(c.props.label, scope);
    });
    node.append(legend);
    const single = resolve(c.props.variant, scope) === "mutuallyExclusive";
    const style = resolve(c.props.displayStyle, scope);
    node.dataset.display = style === "chips" ? "chips" : "checkbox";
    const path = pathOf(c);
    const group = `gth-a2ui-choice-${++radioGroups}`;
    const options = Array.isArray(c.props.options) ? c.props.options.slice(0, 100) : [];
    const current = () => {
      const v = resolve(c.props.value, scope);
      return Array.isArray(v) ? v.map(String) : v === undefined || v === null || v === "" ? [] : [String(v)];
    };
    /** @type {any[]} */
    const boxes = [];
    /** @type {{ label: any, text: string }[]} */
    const rows = [];
    if (resolve(c.props.filterable, scope) === true) {
      // A local filter over the options' labels: typing here changes no data.
      const filter = el(ctx.doc, "input", "gth-a2ui-input gth-a2ui-filter");
      filter.setAttribute("type", "search");
      filter.setAttribute("placeholder", "Filter");
      filter.setAttribute("aria-label", "Filter the options");
      filter.addEventListener("input", () => {
        const q = String(filter.value).trim().toLowerCase();
        for (const r of rows) r.label.hidden = Boolean(q) && !r.text.toLowerCase().includes(q);
      });
      node.append(filter);
    }
    for (const opt of options) {
      const value = String(resolve(opt.value, scope) ?? "");
      const box = el(ctx.doc, "input", "gth-a2ui-input");
      box.setAttribute("type", single ? "radio" : "checkbox");
      box.setAttribute("name", group);
      box.value = value;
      box.addEventListener("change", () => {
        const chosen = single ? [value] : boxes.filter((b) => b.checked).map((b) => b.value);
        ctx.write(path, chosen, scope, node);
      });
      const label = el(ctx.doc, "label", "gth-a2ui-option");
      const text = el(ctx.doc, "span");
      const row = { label, text: value };
      ctx.bind(text, () => {
        row.text = resolveText(opt.label, scope) || value;
        text.textContent = row.text;
      });
      label.append(box, text);
      node.append(label);
      boxes.push(box);
      rows.push(row);
    }
    ctx.bind(node, () => {
      const chosen = new Set(current());
      for (const b of boxes) b.checked = chosen.has(b.value);
    });
    validation(ctx, c, scope, node, node);
    return node;
  },

  Slider(/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx) {
    const input = el(ctx.doc, "input", "gth-a2ui-input");
    input.setAttribute("type", "range");
    const min = Number(resolve(c.props.min, scope) ?? 0);
    const max = Number(resolve(c.props.max, scope) ?? 100);
    input.setAttribute("min", String(Number.isFinite(min) ? min : 0));
    input.setAttribute("max", String(Number.isFinite(max) ? max : 100));
    const step = Number(resolve(c.props.step, scope));
    if (Number.isFinite(step) && step > 0) input.setAttribute("step", String(step));
    const path = pathOf(c);
    const out = el(ctx.doc, "output");
    ctx.bind(input, () => {
      input.value = resolveText(c.props.value, scope);
      out.textContent = input.value;
    });
    input.addEventListener("input", () => {
      out.textContent = input.value;
      ctx.write(path, Number(input.value), scope, input);
    });
    const wrap = field(ctx, c, scope, input);
    wrap.append(out);
    return wrap;
  },

  DateTimeInput(/** @type {Component} */ c, /** @type {Scope} */ scope, /** @type {any} */ ctx) {
    const date = resolve(c.props.enableDate, scope) !== false;
    const time = resolve(c.props.enableTime, scope) !== false;
    const type = date && time ? "datetime-local" : time ? "time" : "date";
    const input = el(ctx.doc, "input", "gth-a2ui-input");
    input.setAttribute("type", type);
    const path = pathOf(c);
    const width = type === "datetime-local" ? 16 : type === "date" ? 10 : 5;
    ctx.bind(input, () => {
      for (const k of ["min", "max"]) {
        const v = resolveText(c.props[k], scope);
        const bound = type === "time" && v.includes("T") ? v.split("T")[1].slice(0, 5) : v.slice(0, width);
        if (bound) input.setAttribute(k, bound);
        else input.removeAttribute(k);
      }
    });
    ctx.bind(input, () => {
      const v = resolveText(c.props.value, scope);
      input.value = type === "time" && v.includes("T") ? v.split("T")[1].slice(0, 5) : v.slice(0, width);
    });
    input.addEventListener("change", () => ctx.write(path, input.value, scope, input));
    return field(ctx, c, scope, input);
  },
};
