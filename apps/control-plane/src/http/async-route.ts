import type { NextFunction, Request, Response } from 'express';

/** An async route handler whose rejection goes to the error middleware (express 5 style, explicit). */
export function asyncRoute(h: (req: Request, res: Response) => Promise<void>) {
  return (req: Request, res: Response, next: NextFunction): void => {
    h(req, res).catch(next);
  };
}
