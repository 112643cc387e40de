/**
 * What ffmpeg and ffprobe may open for a local input (issue 33, contract §2): the file itself and pipes, never a
 * network protocol, and only demuxers that read one self-contained file. Playlists and manifests (HLS, DASH, IMF,
 * concat, ffmetadata, SDP/RTP/RTSP) name other resources, local files or URLs, which a crafted upload would make the
 * engine open (another job's media, a service on the private network): they are not on the list, so such an input
 * is refused before anything it names is touched. No service input reaches ffmpeg as a URL: URL inputs are
 * downloaded through the SSRF guard first, and ffmpeg reads the downloaded file.
 */

/** Protocols of a local input: the file and pipes (ffmpeg 5.1 spelling of `-protocol_whitelist`). */
export const LOCAL_PROTOCOLS = 'file,pipe';

/**
 * Demuxers of one self-contained audio or video file: the containers of the spec's formats (contract §7) and the
 * other single-file containers frames are taken from. No demuxer here opens a second resource.
 */
export const MEDIA_DEMUXERS = [
  ...['mov', 'mp4', 'm4a', '3gp', 'matroska', 'webm', 'ogg', 'mp3', 'mpeg', 'mpegts', 'wav', 'flac'],
  ...['avi', 'flv', 'asf', 'aac', 'ac3', 'eac3', 'dts', 'amr', 'amrnb', 'amrwb', 'aiff', 'caf', 'mxf', 'nut'],
  ...['ivf', 'rm', 'wv', 'ape', 'tta', 'tak', 'dv', 'w64', 'au', 'm4v', 'h264', 'hevc', 'mpegvideo', 'mjpeg'],
  ...['yuv4mpegpipe', 'gif', 'wtv', 'mpc', 'mpc8', 'loas', 'truehd', 'mlp', 'xwma', 'voc', 'oma', 'smjpeg', 'gsm'],
].join(',');

/** Demuxers of one still image (the OCR path turns a page image with ffmpeg). */
export const IMAGE_DEMUXERS = [
  ...['image2', 'png_pipe', 'jpeg_pipe', 'tiff_pipe', 'bmp_pipe', 'webp_pipe', 'gif', 'gif_pipe', 'apng'],
  ...['pam_pipe', 'pbm_pipe', 'pgm_pipe', 'ppm_pipe', 'j2k_pipe', 'jpegls_pipe', 'qoi_pipe', 'pcx_pipe'],
].join(',');

/** Input options that bound what one local input may open; they go right before its `-i` (or ffprobe's file). */
export const localInputOptions = (demuxers: string = MEDIA_DEMUXERS): string[] => [
  '-protocol_whitelist',
  LOCAL_PROTOCOLS,
  '-format_whitelist',
  demuxers,
];

/** `-i file` with {@link localInputOptions}. */
export const localInput = (file: string, demuxers?: string): string[] => [...localInputOptions(demuxers), '-i', file];
