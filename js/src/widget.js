// Placeholder entry for the anywidget front end (built out in issue 2): the bundle must exist
// so the Python build has something to ship.
export default {
  render({ el }) {
    el.textContent = "gth-jupyter widget";
  },
};
