/** The contract's error body. */
export interface ErrorBody {
  error: string;
  message: string;
  request_id: string;
}
