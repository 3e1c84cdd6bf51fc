/** nunjucks' parser module (plain JS, no types shipped for it): text in, parse tree out; it evaluates nothing. */
declare module "nunjucks/src/parser" {
  const parser: { parse(src: string): import("./evaluate").TemplateNode };
  export default parser;
}
