// How JupyterLab hides math from its Markdown parser: `removeMath` and `replaceMath` of
// @jupyterlab/rendermime 4.6 (src/latex.ts), as JupyterLab's `renderMarkdown` runs them around
// marked. safe_markdown.js renders a cell the same way to check what the page will get: the math
// is taken out of the text before marked parses it and put back into marked's HTML afterwards,
// unescaped quotes included, so math can land in an attribute that marked's own parse never saw.
// A copy, so that Node's tests can load it (the package's ES modules are not marked as such, and
// import without file extensions); js/test/safe_markdown.test.mjs checks it against the
// installed package's own code.
//
// The original carries this notice: Copyright (c) Jupyter Development Team. Distributed under the
// terms of the Modified BSD License. Some of the code here is adapted with permission from Davide
// Cervone under the terms of the Apache2 license governing the MathJax project. Other minor
// modifications are also due to StackExchange and are used with permission.

const inline = "$"; // the inline math delimiter
// Math delimiters and the special symbols needed to search the text for math.
const MATHSPLIT = /(\$\$?|\\(?:begin|end)\{[a-z]*\*?\}|\\[{}$]|[{}]|(?:\n\s*)+|@@\d+@@|\\\\[()[\]])/i;

/**
 * The text with each piece of math replaced by `@@<n>@@`, and the pieces (`&`, `<`, `>`
 * escaped): delimiters must match, braces balance, and math never crosses a blank line.
 * @param {string} text
 * @returns {{ text: string, math: string[] }}
 */
export function removeMath(text) {
  /** @type {string[]} */
  const math = [];
  /** @type {number | null} */
  let start = null;
  /** @type {string | null} */
  let end = null;
  /** @type {number | null} */
  let last = null;
  let braces = 0;
  /** @type {(text: string) => string} */
  let deTilde;
  // What will be code spans is hidden from the search (`$foo` and `$bar` are variables).
  const hasCodeSpans = text.includes("`") || text.includes("~~~");
  if (hasCodeSpans) {
    text = text
      .replace(/~/g, "~T")
      .replace(/^(?<fence>`{3,}|(~T){3,})[^`\n]*\n([\s\S]*?)^\k<fence>`*$/gm, (whole) => whole.replace(/\$/g, "~D"))
      .replace(/(^|[^\\])(`+)([^\n]*?[^`\n])\2(?!`)/gm, (whole) => whole.replace(/\$/g, "~D"));
    deTilde = (t) => t.replace(/~([TD])/g, (_whole, character) => (character === "T" ? "~" : inline));
  } else {
    deTilde = (t) => t;
  }
  let blocks = text.replace(/\r\n?/g, "\n").split(MATHSPLIT);
  for (let i = 1, m = blocks.length; i < m; i += 2) {
    const block = blocks[i];
    if (block.charAt(0) === "@") {
      // Things that look like our math markers are stored and put back with the math.
      blocks[i] = "@@" + math.length + "@@";
      math.push(block);
    } else if (start !== null) {
      // In math: look for the end delimiter, not past a blank line, balancing braces.
      if (block === end) {
        if (braces) {
          last = i;
        } else {
          blocks = processMath(start, i, deTilde, math, blocks);
          start = null;
          end = null;
          last = null;
        }
      } else if (block.match(/\n.*\n/)) {
        if (last !== null) {
          i = last;
          blocks = processMath(start, i, deTilde, math, blocks);
        }
        start = null;
        end = null;
        last = null;
        braces = 0;
      } else if (block === "{") {
        braces++;
      } else if (block === "}" && braces) {
        braces--;
      }
    } else if (block === inline || block === "$$") {
      start = i;
      end = block;
      braces = 0;
    } else if (block === "\\\\(" || block === "\\\\[") {
      start = i;
      end = block.slice(-1) === "(" ? "\\\\)" : "\\\\]";
      braces = 0;
    } else if (block.substr(1, 5) === "begin") {
      start = i;
      end = "\\end" + block.substr(6);
      braces = 0;
    }
  }
  if (start !== null && last !== null) {
    blocks = processMath(start, last, deTilde, math, blocks);
  }
  return { text: deTilde(blocks.join("")), math };
}

/**
 * Puts the math back into the HTML (`\\(`, `\\[` and their ends lose one backslash).
 * @param {string} text
 * @param {string[]} math
 */
export function replaceMath(text, math) {
  /** @param {string} _match @param {string} n */
  const process = (_match, n) => {
    let group = math[Number(n)];
    if (group.substr(0, 3) === "\\\\(" && group.substr(group.length - 3) === "\\\\)") {
      group = "\\(" + group.substring(3, group.length - 3) + "\\)";
    } else if (group.substr(0, 3) === "\\\\[" && group.substr(group.length - 3) === "\\\\]") {
      group = "\\[" + group.substring(3, group.length - 3) + "\\]";
    }
    return group;
  };
  return text.replace(/@@(\d+)@@/g, process);
}

/**
 * Blocks i..j are one piece of math: joined, escaped, stored, and replaced by its marker.
 * @param {number} i @param {number} j @param {(text: string) => string} preProcess
 * @param {string[]} math @param {string[]} blocks
 */
function processMath(i, j, preProcess, math, blocks) {
  const block = blocks
    .slice(i, j + 1)
    .join("")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;");
  while (j > i) {
    blocks[j] = "";
    j--;
  }
  blocks[i] = "@@" + math.length + "@@";
  math.push(preProcess(block));
  return blocks;
}
