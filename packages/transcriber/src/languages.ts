// The list lives in contracts: the API refuses a language whisper.cpp does not know at creation.
export { WHISPER_LANGUAGES, languageCode } from '@captionfarm/contracts';
