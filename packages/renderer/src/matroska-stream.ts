/**
 * A minimal Matroska writer for the caption stream: uncompressed RGBA or yuva420p frames, each with its own
 * timestamp (variable frame rate), written straight into ffmpeg's `pipe:3`. Instead of the PAM
 * files + concat list of the first measurement: no temp files, no disk traffic (a band image is
 * 1-3 MB), and back-pressure keeps painting just ahead of ffmpeg. Timestamps are in microseconds.
 * Layout: EBML header, Segment of unknown size (live streaming), Info, Tracks, then one Cluster
 * per frame holding its timestamp and one SimpleBlock.
 */

const ID = {
  EBML: [0x1a, 0x45, 0xdf, 0xa3],
  EBMLVersion: [0x42, 0x86],
  EBMLReadVersion: [0x42, 0xf7],
  EBMLMaxIDLength: [0x42, 0xf2],
  EBMLMaxSizeLength: [0x42, 0xf3],
  DocType: [0x42, 0x82],
  DocTypeVersion: [0x42, 0x87],
  DocTypeReadVersion: [0x42, 0x85],
  Segment: [0x18, 0x53, 0x80, 0x67],
  Info: [0x15, 0x49, 0xa9, 0x66],
  TimestampScale: [0x2a, 0xd7, 0xb1],
  MuxingApp: [0x4d, 0x80],
  WritingApp: [0x57, 0x41],
  Tracks: [0x16, 0x54, 0xae, 0x6b],
  TrackEntry: [0xae],
  TrackNumber: [0xd7],
  TrackUID: [0x73, 0xc5],
  TrackType: [0x83],
  FlagLacing: [0x9c],
  CodecID: [0x86],
  Video: [0xe0],
  PixelWidth: [0xb0],
  PixelHeight: [0xba],
  ColourSpace: [0x2e, 0xb5, 0x24],
  Cluster: [0x1f, 0x43, 0xb6, 0x75],
  Timestamp: [0xe7],
  SimpleBlock: [0xa3],
} as const;

/** EBML variable-length size, always 8 bytes: simple, and any frame size fits. */
function size8(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt32BE(Math.floor(n / 2 ** 32), 0);
  b.writeUInt32BE(n >>> 0, 4);
  b[0] = 0x01; // length marker; sizes stay far below 2^56
  return b;
}

function uintBytes(n: number): Buffer {
  const bytes: number[] = [];
  let v = Math.floor(n);
  do {
    bytes.unshift(v % 256);
    v = Math.floor(v / 256);
  } while (v > 0);
  return Buffer.from(bytes);
}

function element(id: readonly number[], payload: Buffer | Buffer[]): Buffer {
  const body = Array.isArray(payload) ? Buffer.concat(payload) : payload;
  return Buffer.concat([Buffer.from(id), size8(body.length), body]);
}

const uint = (id: readonly number[], n: number): Buffer => element(id, uintBytes(n));
const str = (id: readonly number[], s: string): Buffer => element(id, Buffer.from(s, 'latin1'));

/**
 * The ColourSpace FourCC of an uncompressed track: how ffmpeg's Matroska demuxer learns the pixel
 * format (libavcodec's raw pixel format tags).
 */
/** The band's pixel format on the wire: straight RGBA, or yuva420p planes (YuvaBand), which ffmpeg overlays on yuv420p video without converting them. */
export type BandPixelFormat = 'rgba' | 'yuva420p';

const FOURCC: Record<BandPixelFormat, Buffer> = { rgba: Buffer.from('RGBA', 'latin1'), yuva420p: Buffer.from([0x59, 0x34, 11, 8]) };

/** Everything before the first frame: EBML header, open Segment, Info (1 us ticks) and one uncompressed video track (RGBA unless said). */
export function matroskaHeader(size: { width: number; height: number; pixelFormat?: BandPixelFormat }): Buffer {
  return Buffer.concat([
    element(ID.EBML, [
      uint(ID.EBMLVersion, 1),
      uint(ID.EBMLReadVersion, 1),
      uint(ID.EBMLMaxIDLength, 4),
      uint(ID.EBMLMaxSizeLength, 8),
      str(ID.DocType, 'matroska'),
      uint(ID.DocTypeVersion, 4),
      uint(ID.DocTypeReadVersion, 2),
    ]),
    Buffer.from(ID.Segment),
    Buffer.from([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), // unknown size: a stream
    element(ID.Info, [uint(ID.TimestampScale, 1000), str(ID.MuxingApp, 'captionfarm'), str(ID.WritingApp, 'captionfarm')]),
    element(ID.Tracks, [
      element(ID.TrackEntry, [
        uint(ID.TrackNumber, 1),
        uint(ID.TrackUID, 1),
        uint(ID.TrackType, 1),
        uint(ID.FlagLacing, 0),
        str(ID.CodecID, 'V_UNCOMPRESSED'),
        element(ID.Video, [uint(ID.PixelWidth, size.width), uint(ID.PixelHeight, size.height), element(ID.ColourSpace, FOURCC[size.pixelFormat ?? 'rgba'])]),
      ]),
    ]),
  ]);
}

/** The longest matroskaFramePrefix: Cluster id and size, Timestamp (id, size, up to 7 bytes below 2^56 us), SimpleBlock id and size, block header. */
export const MATROSKA_FRAME_PREFIX_MAX = 4 + 8 + (1 + 8 + 7) + 1 + 8 + 4;

/**
 * The bytes that precede one frame's pixels: a Cluster at `timestampUs` holding a keyframe
 * SimpleBlock of `frameBytes` bytes. Write this, then the pixels themselves; at most
 * MATROSKA_FRAME_PREFIX_MAX bytes.
 */
export function matroskaFramePrefix(timestampUs: number, frameBytes: number): Buffer {
  const blockHead = Buffer.from([0x81, 0x00, 0x00, 0x80]); // track 1, relative time 0, keyframe
  const timestamp = uint(ID.Timestamp, timestampUs);
  const blockSize = blockHead.length + frameBytes;
  const clusterSize = timestamp.length + ID.SimpleBlock.length + 8 + blockSize;
  return Buffer.concat([Buffer.from(ID.Cluster), size8(clusterSize), timestamp, Buffer.from(ID.SimpleBlock), size8(blockSize), blockHead]);
}
