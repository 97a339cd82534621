import { ContentInitial1763800000000 } from './1763800000000-content-initial';
import { LabelSets1763840000000 } from './1763840000000-labelsets';
import { SearchIndex1763900000000 } from './1763900000000-search-index';
import { PostingsLength1764000000000 } from './1764000000000-postings-length';
import { ProcessingRequests1764100000000 } from './1764100000000-processing-requests';
import { ProcessingPull1764300000000 } from './1764300000000-processing-pull';
import { Webhooks1764400000000 } from './1764400000000-webhooks';
import { Synonyms1764500000000 } from './1764500000000-synonyms';
import { SearchGeneration1764600000000 } from './1764600000000-search-generation';
import { SearchRelations1764700000000 } from './1764700000000-search-relations';
import { SearchChanges1764800000000 } from './1764800000000-search-changes';
import { ParagraphSeconds1764900000000 } from './1764900000000-paragraph-seconds';
import { EntitiesGroups1764950000000 } from './1764950000000-entities-groups';
import { KbConfigs1765000000000 } from './1765000000000-kb-configs';
import { KbTransfers1765100000000 } from './1765100000000-kb-transfers';
import { KeyValueFields1765120000000 } from './1765120000000-key-value-fields';
import { ProcessingNuaKey1765150000000 } from './1765150000000-processing-nua-key';
import { KeywordDatetimeFields1765200000000 } from './1765200000000-keyword-datetime-fields';
import { FieldStoredBytes1765250000000 } from './1765250000000-field-stored-bytes';
import { RelationNameWords1765262100000 } from './1765262100000-relation-name-words';
import { ImportMetering1765300000000 } from './1765300000000-import-metering';

export const CONTENT_MIGRATIONS = [
  ContentInitial1763800000000,
  LabelSets1763840000000,
  SearchIndex1763900000000,
  PostingsLength1764000000000,
  ProcessingRequests1764100000000,
  ProcessingPull1764300000000,
  Webhooks1764400000000,
  Synonyms1764500000000,
  SearchGeneration1764600000000,
  SearchRelations1764700000000,
  SearchChanges1764800000000,
  ParagraphSeconds1764900000000,
  EntitiesGroups1764950000000,
  KbConfigs1765000000000,
  KbTransfers1765100000000,
  KeyValueFields1765120000000,
  ProcessingNuaKey1765150000000,
  KeywordDatetimeFields1765200000000,
  FieldStoredBytes1765250000000,
  RelationNameWords1765262100000,
  ImportMetering1765300000000,
];
