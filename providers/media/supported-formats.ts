/** The audio formats of spec §4.11: the list is the contract (its own module: probe.ts and formats.ts both use it). */
export const SUPPORTED_FORMATS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'] as const;
export type AudioFormat = (typeof SUPPORTED_FORMATS)[number];
