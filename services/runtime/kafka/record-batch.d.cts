export declare class MeasuredRecord {
  readonly size: number;
}
export declare function measureRecord(record: {
  offsetDelta?: number;
  timestampDelta?: number;
  key?: Buffer | string | null;
  value?: Buffer | string | null;
  headers?: Record<string, Buffer | string | (Buffer | string)[]>;
}): MeasuredRecord;
export declare function crc32c(buf: Uint8Array, start?: number, end?: number): number;
interface EncoderLike {
  readonly buffer: Buffer;
  size(): number;
}
export declare function createRecordBatch(deps: { Encoder: new (initialSize?: number) => unknown; longPath: string; compressionPath: string }): {
  RecordBatch(batch: Record<string, unknown>): Promise<EncoderLike>;
  MAGIC_BYTE: number;
};
export declare function createProduceRequest(deps: {
  Encoder: new (initialSize?: number) => unknown;
  RecordBatch: (batch: Record<string, unknown>) => Promise<EncoderLike>;
}): (request: Record<string, unknown>) => { apiKey: number; apiVersion: number; apiName: string; expectResponse(): boolean; encode(): Promise<EncoderLike> };
