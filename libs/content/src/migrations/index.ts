import { ContentInitial1763800000000 } from './1763800000000-content-initial';
import { LabelSets1763840000000 } from './1763840000000-labelsets';
import { SearchIndex1763900000000 } from './1763900000000-search-index';

export const CONTENT_MIGRATIONS = [ContentInitial1763800000000, LabelSets1763840000000, SearchIndex1763900000000];
