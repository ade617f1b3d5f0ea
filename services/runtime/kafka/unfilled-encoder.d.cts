/** kafkajs's encoder module at `file`, compiled with `buffer` in place of the global Buffer. */
export declare function compileEncoder(file: string, buffer: typeof Buffer): unknown;
/** Buffer, except that alloc returns unfilled memory (Buffer.allocUnsafe). */
export declare const UnfilledBuffer: typeof Buffer;
