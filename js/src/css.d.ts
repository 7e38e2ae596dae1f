// esbuild bundles *.css with the "text" loader: the import is the stylesheet as a string.
declare module "*.css" {
  const css: string;
  export default css;
}
