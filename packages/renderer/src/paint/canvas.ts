/**
 * The one door to @napi-rs/canvas: importing it from here loads the binding with our allocator
 * settings (allocator-env.ts runs first, as ES modules run their imports in order).
 */
import './allocator-env.ts';

export { createCanvas, GlobalFonts, loadImage } from '@napi-rs/canvas';
export type { Canvas, DOMMatrix, Image, SKRSContext2D } from '@napi-rs/canvas';
