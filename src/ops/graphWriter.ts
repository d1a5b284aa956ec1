/** The process that writes the new graph of a migration (see graphCopy.ts). */
import { serveGraphWrite } from './graphCopy.js';

serveGraphWrite();
