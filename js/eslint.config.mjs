// `npm run lint`: ESLint's recommended rules over the widget, its tests and its build scripts.
// src/ runs in the browser; the tests, their fakes and the build run in Node.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/"] },
  js.configs.recommended,
  {
    files: ["src/**/*.js"],
    languageOptions: { ecmaVersion: 2025, sourceType: "module", globals: globals.browser },
  },
  {
    files: ["test/**/*.mjs", "test-support/**/*.mjs", "*.mjs"],
    languageOptions: { ecmaVersion: 2025, sourceType: "module", globals: { ...globals.node, ...globals.browser } },
  },
  {
    rules: {
      // `_name`: a parameter an interface requires but this implementation does not use;
      // `const { a, ...rest } = x` is how a key is left out of a copy.
      "no-unused-vars": ["error", { argsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true }],
    },
  },
];
