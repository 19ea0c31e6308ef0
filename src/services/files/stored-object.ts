import type { StagedHostFile } from '../../lib/staged-host-file.ts';
import type { SealedObject } from './library-content.ts';

/** A file's bytes sealed in the store, with what was detected of them, before an item points at them. */
export interface StoredObject {
  storageKey: string;
  size: number;
  wrappedKey: string;
  keyId: string;
  mimeType: string;
  /** Whether mimeType was detected from the content (else it is the client's, or the default). */
  detected: boolean;
  /** Its bytes written again, in a library's host folder: the file lands there, and the object is deleted. */
  host?: StagedHostFile;
  /** The content a library file had before, kept in the store to become its version. */
  kept?: SealedObject;
}
