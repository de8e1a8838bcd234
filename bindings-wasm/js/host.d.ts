// The readers of host.js, as api.ts uses them.
export declare const ENGINE: unique symbol
export declare const THROWN: unique symbol
export declare const READERS: Readonly<Record<string, unknown>>
