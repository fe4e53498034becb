/** Style sheets are bundled by esbuild (plugins/web/build.ts). */
declare module '*.css';
