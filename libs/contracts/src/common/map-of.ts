import 'reflect-metadata';
import type { ClassConstructor } from 'class-transformer';

/**
 * Declares a property as a map from ids to objects of `cls` (e.g. `texts: {body: {...}}`).
 * class-validator cannot validate map values or keys, so `collectIssues` walks these itself
 * and reports problems with their full location (`['body', 'texts', 'summary', 'format']`).
 */
export interface MapOfSpec {
  cls: ClassConstructor<object>;
  keyPattern?: RegExp;
  maxEntries?: number;
}

const MAP_OF = Symbol('kb:map-of');

export function MapOf(cls: ClassConstructor<object>, options: Omit<MapOfSpec, 'cls'> = {}): PropertyDecorator {
  return (target, property) => {
    const specs: Record<string, MapOfSpec> = { ...(Reflect.getMetadata(MAP_OF, target) ?? {}) };
    specs[String(property)] = { cls, ...options };
    Reflect.defineMetadata(MAP_OF, specs, target);
  };
}

export function mapOfSpecs(target: object): Record<string, MapOfSpec> {
  return (Reflect.getMetadata(MAP_OF, target) as Record<string, MapOfSpec> | undefined) ?? {};
}
