/** See `stale-data-dirs.mjs`. */
export declare const STALE_AFTER_MS: number;
export declare function sweepStaleDataDirs(own: string, now?: number): string[];
