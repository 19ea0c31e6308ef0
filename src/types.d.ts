declare module '*.sql' {
  const text: string;
  export default text;
}

// busboy's own header and parameter parsers, used by the multipart parser (http/multipart.ts).
declare module 'busboy/lib/utils.js' {
  export function parseContentType(
    value: string,
  ): { type: string; subtype: string; params: Record<string, string | undefined> } | undefined;
  export function parseDisposition(
    value: string,
    decoder: (text: string, hint: number) => string | undefined,
  ): { type: string; params: Record<string, string | undefined> } | undefined;
  export function getDecoder(charset: string): (text: string, hint: number) => string | undefined;
  export function convertToUTF8(data: Uint8Array, charset: string, hint: number): string | undefined;
  export function basename(path: string): string;
}

// libheif-js ships no types for its raw C API: the functions the tile decoder calls (pointers are wasm32 offsets).
declare module 'libheif-js/wasm-bundle' {
  export interface LibheifModule {
    HEAPU8: Uint8Array;
    HEAP32: Int32Array;
    HEAPU32: Uint32Array;
    _malloc(bytes: number): number;
    _free(p: number): void;
    _heif_context_alloc(): number;
    _heif_context_free(ctx: number): void;
    _heif_context_read_from_memory_without_copy(err: number, ctx: number, data: number, size: number, options: number): void;
    _heif_context_get_primary_image_handle(err: number, ctx: number, out: number): void;
    _heif_image_handle_release(handle: number): void;
    _heif_image_handle_get_width(handle: number): number;
    _heif_image_handle_get_height(handle: number): number;
    _heif_image_handle_get_item_id(handle: number): number;
    _heif_image_handle_has_alpha_channel(handle: number): number;
    _heif_image_handle_get_image_tiling(err: number, handle: number, processTransformations: number, out: number): void;
    _heif_image_handle_decode_image_tile(
      err: number,
      handle: number,
      out: number,
      colorspace: number,
      chroma: number,
      options: number,
      x: number,
      y: number,
    ): void;
    _heif_decode_image(err: number, handle: number, out: number, colorspace: number, chroma: number, options: number): void;
    _heif_decoding_options_alloc(): number;
    _heif_decoding_options_free(options: number): void;
    _heif_image_release(image: number): void;
    _heif_image_get_plane_readonly2(image: number, channel: number, stride: number): number;
    _heif_image_get_width(image: number, channel: number): number;
    _heif_image_get_height(image: number, channel: number): number;
    _heif_item_get_transformation_properties(ctx: number, item: number, out: number, count: number): number;
    _heif_item_get_property_type(ctx: number, item: number, property: number): number;
    _heif_item_get_property_transform_rotation_ccw(ctx: number, item: number, property: number): number;
    _heif_item_get_property_transform_mirror(ctx: number, item: number, property: number): number;
    _heif_item_get_property_transform_crop_borders(
      ctx: number,
      item: number,
      property: number,
      width: number,
      height: number,
      left: number,
      top: number,
      right: number,
      bottom: number,
    ): void;
  }
  const libheif: LibheifModule;
  export default libheif;
}

// Imported `with { type: 'file' }`: the path of the file (inside the executable once compiled).
declare module '*.wasm' {
  const path: string;
  export default path;
}
