// autocannon 9 ships no type declarations; load.ts is its only user.
declare module 'autocannon';
