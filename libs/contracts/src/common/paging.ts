export interface Pagination {
  page: number;
  size: number;
  last: boolean;
}
