declare module "*.sql" {
  const text: string;
  export default text;
}

declare module "*.data" {
  const path: string;
  export default path;
}
declare module "*.wasm" {
  const path: string;
  export default path;
}

declare module "*.md" {
  const text: string;
  export default text;
}
declare module "*.css" {
  const text: string;
  export default text;
}
declare module "*.svg" {
  const text: string;
  export default text;
}
