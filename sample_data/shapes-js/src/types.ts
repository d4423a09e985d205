/** Shared type declarations for the shapes-js modules. */

export interface Vec2 {
  readonly x: number;
  readonly y: number;
}

export interface Bounds {
  min: Vec2;
  max: Vec2;
}

export type ShapeKind = 'circle' | 'rect' | 'polygon';

export interface Shape {
  readonly kind: ShapeKind;
  area(): number;
  perimeter(): number;
  contains(point: Vec2): boolean;
  bounds(): Bounds;
}

export interface Style {
  fill?: string;
  stroke?: string;
  strokeWidth?: number;
}

export const DEFAULT_STYLE: Required<Style> = {
  fill: 'none',
  stroke: '#1f2937',
  strokeWidth: 1,
};
