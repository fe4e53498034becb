/** Message texts in every language the service speaks. `{name}` is a parameter. */
export type Language = 'en' | 'de';

const en: Record<string, string> = {
  badRequest: 'The request is invalid.',
  invalidJson: 'The request body is not valid JSON.',
  invalidPayload: 'The {type} cannot be {action}.',
  invalidPath: 'The path {path} is invalid.',
  invalidParameter: 'The parameter {name} is invalid.',
  invalidDatabase: 'The database cannot be created.',
  invalidQuery: 'The query cannot be run.',
  invalidQuerySettings: 'The query settings cannot be changed.',
  invalidAccessKey: 'The access key cannot be created.',
  invalidAccessRules: 'The access rules cannot be changed.',
  invalidExplainRequest: 'The access rules cannot be explained for this request.',
  unauthenticated: 'Authentication is required.',
  credentialsRefused: 'The credentials were not accepted.',
  forbidden: 'You are not allowed to do this.',
  notFound: 'Nothing was found at this address.',
  objectNotFound: 'The {type} {key} was not found.',
  databaseNotFound: 'The database {name} was not found.',
  jobNotFound: 'The job {id} was not found.',
  accessKeyNotFound: 'The access key {id} was not found.',
  profileNotFound: 'The profile {name} was not found.',
  methodNotAllowed: 'The method is not allowed here.',
  conflict: 'The request conflicts with the current state.',
  labelClash: 'The {type} cannot be {action}: the label is already taken.',
  idClash: 'The {type} cannot be {action}: the technical key is already taken.',
  concurrentChange: 'The object was changed by another request at the same time; read it again and repeat the change.',
  databaseExists: 'The database {name} exists already.',
  preconditionFailed: 'The object has changed since it was read (version {version}).',
  payloadTooLarge: 'The request body is too large.',
  unsupportedMediaType: 'The content type {contentType} is not supported; send {expected}.',
  contentTypeMissing: 'The request has a body but no content type; send {expected}.',
  tooManyAttempts: 'Too many failed sign-in attempts; try again later.',
  internal: 'An unexpected error occurred.',
  unavailable: 'The service is temporarily unavailable.',
  // violations
  mandatory: 'The property is mandatory.',
  unknownProperty: 'The property is unknown.',
  mustBeText: 'The value must be text.',
  mustBeWholeNumber: 'The value must be a whole number.',
  mustBeNumber: 'The value must be a number.',
  mustBeBoolean: 'The value must be true or false.',
  mustBeObject: 'The value must be a JSON object.',
  mustBeTextOrObject: 'The value must be text or a JSON object.',
  mustBeList: 'The value must be a list (a JSON array).',
  mustBeTechnicalKey: 'The value must be a technical key (a UUID).',
  mustBeEpochMilliseconds: 'The value must be a time in epoch milliseconds (milliseconds since 1 January 1970, UTC).',
  mustBeMilliseconds: 'The value must be a whole number of milliseconds from 0 to {maximum}.',
  mustBeMillisecondsOrNull: 'The value must be a whole number of milliseconds from 0 to {maximum}, or null.',
  databaseNameInvalid: 'A database name starts with a lower-case letter and holds only lower-case letters, digits and underscores, 63 characters at most.',
  notAllowedValue: 'The value is not allowed; allowed: {allowed}.',
  tooLong: 'The value is too long: at most {limit} characters.',
  tooShort: 'The value is too short: at least {limit} characters.',
  tooManyItems: 'The list is too long: at most {limit} entries.',
  invalidValue: 'The value is invalid.',
  labelTaken: 'The label is already taken.',
  idTaken: 'The technical key is already taken.',
  listedTwice: 'The object is listed more than once.',
  notCreatableHere: 'An object of type {type} cannot be created in the list {list}; create it in a list of its parent.',
  wrongTypeInList: 'An object of type {type} does not belong in the list {list}.',
  unknownType: 'The type {type} is unknown.',
  typeMissing: 'The property _type is mandatory.',
  referenceNotFound: 'No {type} with this technical key exists.',
  typeChange: 'The type of an existing object cannot be changed.',
  // Past participles put into the passive sentences above ({action}): they take no article, gender or case.
  actionCreate: 'created',
  actionUpdate: 'changed',
};

const de: Record<string, string> = {
  badRequest: 'Die Anfrage ist ungültig.',
  invalidJson: 'Der Inhalt der Anfrage ist kein gültiges JSON.',
  invalidPayload: 'Das Objekt {type} kann nicht {action} werden.',
  invalidPath: 'Der Pfad {path} ist ungültig.',
  invalidParameter: 'Der Parameter {name} ist ungültig.',
  invalidDatabase: 'Die Datenbank kann nicht angelegt werden.',
  invalidQuery: 'Die Abfrage kann nicht ausgeführt werden.',
  invalidQuerySettings: 'Die Einstellungen der Abfrageschnittstelle können nicht geändert werden.',
  invalidAccessKey: 'Der Zugriffsschlüssel kann nicht angelegt werden.',
  invalidAccessRules: 'Die Zugriffsregeln können nicht geändert werden.',
  invalidExplainRequest: 'Die Zugriffsregeln können für diese Anfrage nicht erklärt werden.',
  unauthenticated: 'Eine Anmeldung ist erforderlich.',
  credentialsRefused: 'Die Anmeldedaten wurden nicht akzeptiert.',
  forbidden: 'Sie haben keine Berechtigung dafür.',
  notFound: 'Unter dieser Adresse wurde nichts gefunden.',
  objectNotFound: 'Das Objekt {type} {key} wurde nicht gefunden.',
  databaseNotFound: 'Die Datenbank {name} wurde nicht gefunden.',
  jobNotFound: 'Der Auftrag {id} wurde nicht gefunden.',
  accessKeyNotFound: 'Der Zugriffsschlüssel {id} wurde nicht gefunden.',
  profileNotFound: 'Das Profil {name} wurde nicht gefunden.',
  methodNotAllowed: 'Die Methode ist hier nicht erlaubt.',
  conflict: 'Die Anfrage steht im Widerspruch zum aktuellen Zustand.',
  labelClash: 'Das Objekt {type} kann nicht {action} werden: Der Name ist bereits vergeben.',
  idClash: 'Das Objekt {type} kann nicht {action} werden: Der technische Schlüssel ist bereits vergeben.',
  concurrentChange: 'Das Objekt wurde gleichzeitig von einer anderen Anfrage geändert; lesen Sie es erneut und wiederholen Sie die Änderung.',
  databaseExists: 'Die Datenbank {name} existiert bereits.',
  preconditionFailed: 'Das Objekt wurde seit dem Lesen geändert (Version {version}).',
  payloadTooLarge: 'Der Inhalt der Anfrage ist zu groß.',
  unsupportedMediaType: 'Der Inhaltstyp {contentType} wird nicht unterstützt; senden Sie {expected}.',
  contentTypeMissing: 'Die Anfrage hat einen Inhalt, aber keinen Inhaltstyp; senden Sie {expected}.',
  tooManyAttempts: 'Zu viele fehlgeschlagene Anmeldeversuche; versuchen Sie es später erneut.',
  internal: 'Ein unerwarteter Fehler ist aufgetreten.',
  unavailable: 'Der Dienst ist vorübergehend nicht verfügbar.',
  mandatory: 'Die Eigenschaft ist ein Pflichtfeld.',
  unknownProperty: 'Die Eigenschaft ist unbekannt.',
  mustBeText: 'Der Wert muss ein Text sein.',
  mustBeWholeNumber: 'Der Wert muss eine ganze Zahl sein.',
  mustBeNumber: 'Der Wert muss eine Zahl sein.',
  mustBeBoolean: 'Der Wert muss true oder false sein.',
  mustBeObject: 'Der Wert muss ein JSON-Objekt sein.',
  mustBeTextOrObject: 'Der Wert muss ein Text oder ein JSON-Objekt sein.',
  mustBeList: 'Der Wert muss eine Liste (ein JSON-Array) sein.',
  mustBeTechnicalKey: 'Der Wert muss ein technischer Schlüssel (eine UUID) sein.',
  mustBeEpochMilliseconds: 'Der Wert muss ein Zeitpunkt in Epochen-Millisekunden sein (Millisekunden seit dem 1. Januar 1970, UTC).',
  mustBeMilliseconds: 'Der Wert muss eine ganze Zahl von Millisekunden von 0 bis {maximum} sein.',
  mustBeMillisecondsOrNull: 'Der Wert muss eine ganze Zahl von Millisekunden von 0 bis {maximum} oder null sein.',
  databaseNameInvalid: 'Ein Datenbankname beginnt mit einem Kleinbuchstaben und enthält nur Kleinbuchstaben, Ziffern und Unterstriche, höchstens 63 Zeichen.',
  notAllowedValue: 'Der Wert ist nicht erlaubt; erlaubt: {allowed}.',
  tooLong: 'Der Wert ist zu lang: höchstens {limit} Zeichen.',
  tooShort: 'Der Wert ist zu kurz: mindestens {limit} Zeichen.',
  tooManyItems: 'Die Liste ist zu lang: höchstens {limit} Einträge.',
  invalidValue: 'Der Wert ist ungültig.',
  labelTaken: 'Der Name ist bereits vergeben.',
  idTaken: 'Der technische Schlüssel ist bereits vergeben.',
  listedTwice: 'Das Objekt ist mehrfach aufgeführt.',
  notCreatableHere: 'Ein Objekt vom Typ {type} kann nicht in der Liste {list} angelegt werden; legen Sie es in einer Liste seines übergeordneten Objekts an.',
  wrongTypeInList: 'Ein Objekt vom Typ {type} gehört nicht in die Liste {list}.',
  unknownType: 'Der Typ {type} ist unbekannt.',
  typeMissing: 'Die Eigenschaft _type ist ein Pflichtfeld.',
  referenceNotFound: 'Es gibt kein Objekt {type} mit diesem technischen Schlüssel.',
  typeChange: 'Der Typ eines bestehenden Objekts kann nicht geändert werden.',
  actionCreate: 'angelegt',
  actionUpdate: 'geändert',
};

export const MESSAGES: Record<Language, Record<string, string>> = { en, de };

/** Plugins bring their own texts; a key is registered once. */
export function registerMessages(language: Language, entries: Record<string, string>) {
  for (const [key, text] of Object.entries(entries)) {
    if (MESSAGES[language][key] !== undefined && MESSAGES[language][key] !== text) throw new Error(`message ${key} (${language}) is registered twice`);
    MESSAGES[language][key] = text;
  }
}

export function translate(language: Language, key: string, params: Record<string, unknown> = {}): string {
  const text = MESSAGES[language][key] ?? MESSAGES.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => {
    const value = params[name];
    if (value === undefined) return `{${name}}`;
    // Parameters may themselves be message keys (e.g. the action).
    if (typeof value === 'string' && MESSAGES[language][value] && /^action/.test(value)) return MESSAGES[language][value];
    return String(value);
  });
}
