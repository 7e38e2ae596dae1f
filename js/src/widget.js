// The anywidget entry (AFM): everything a view needs, bundled into one ESM file that the
// server extension serves at {base}static/gth_jupyter/widget.js (see loader.js).

import { mount } from "./app/mount.js";
import css from "./styles.css";

export default {
  /** @param {{ model: any, el: HTMLElement }} props */
  render({ model, el }) {
    return mount({ model, el, css });
  },
};
