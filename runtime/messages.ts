/** Message texts in every language the service speaks. `{name}` is a parameter. */
export type Language = 'en' | 'de';

const en: Record<string, string> = {
  badRequest: 'The request is invalid.',
  invalidJson: 'The request body is not valid JSON.',
  invalidPayload: 'The {type} cannot be {action}.',
  invalidPath: 'The path {path} is invalid.',
  invalidParameter: 'The parameter {name} is invalid.',
  unauthenticated: 'Authentication is required.',
  forbidden: 'You are not allowed to do this.',
  notFound: 'Nothing was found at this address.',
  objectNotFound: 'The {type} {key} was not found.',
  methodNotAllowed: 'The method is not allowed here.',
  conflict: 'The request conflicts with the current state.',
  labelClash: 'The {type} cannot be {action}: the label is already taken.',
  idClash: 'The {type} cannot be {action}: the technical key is already taken.',
  loginIdClash: 'The {type} cannot be {action}: the login ID is already taken.',
  databaseExists: 'The database {name} exists already.',
  tenantIsDefault: 'The tenant {label} is the default tenant of the database and cannot be deleted.',
  tenantNotEmpty: 'The tenant {label} cannot be deleted: it still holds objects other than its users.',
  preconditionFailed: 'The object has changed since it was read (version {version}).',
  payloadTooLarge: 'The request body is too large.',
  unsupportedMediaType: 'The content type {contentType} is not supported; send {expected}.',
  tooManyAttempts: 'Too many failed sign-in attempts; try again later.',
  tooManyQueries: 'Your tenant is running {limit} queries already; try again when one has finished.',
  internal: 'An unexpected error occurred.',
  unavailable: 'The service is temporarily unavailable.',
  // violations
  mandatory: 'The property is mandatory.',
  unknownProperty: 'The property is unknown.',
  wrongType: 'The value must be of type {expected}.',
  notAllowedValue: 'The value is not allowed; allowed: {allowed}.',
  invalidFormat: 'The value must be a {format}.',
  tooLong: 'The value is too long (at most {limit}).',
  tooShort: 'The value is too short (at least {limit}).',
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
  loginIdTaken: 'Another user of this tenant has this login ID.',
  loginIdOfAnotherTenant: 'A user of another tenant has this login ID; only a system administrator may give it to a user of this tenant.',
  defaultTenantBySystemAdministrator: 'Only a system administrator may change which tenant a user signs in to by default.',
  // object kinds for messages
  actionCreate: 'created',
  actionUpdate: 'changed',
};

const de: Record<string, string> = {
  badRequest: 'Die Anfrage ist ungültig.',
  invalidJson: 'Der Inhalt der Anfrage ist kein gültiges JSON.',
  invalidPayload: 'Das Objekt {type} kann nicht {action} werden.',
  invalidPath: 'Der Pfad {path} ist ungültig.',
  invalidParameter: 'Der Parameter {name} ist ungültig.',
  unauthenticated: 'Eine Anmeldung ist erforderlich.',
  forbidden: 'Sie haben keine Berechtigung dafür.',
  notFound: 'Unter dieser Adresse wurde nichts gefunden.',
  objectNotFound: 'Das Objekt {type} {key} wurde nicht gefunden.',
  methodNotAllowed: 'Die Methode ist hier nicht erlaubt.',
  conflict: 'Die Anfrage steht im Widerspruch zum aktuellen Zustand.',
  labelClash: 'Das Objekt {type} kann nicht {action} werden: der Name ist bereits vergeben.',
  idClash: 'Das Objekt {type} kann nicht {action} werden: der technische Schlüssel ist bereits vergeben.',
  loginIdClash: 'Das Objekt {type} kann nicht {action} werden: die Anmelde-ID ist bereits vergeben.',
  databaseExists: 'Die Datenbank {name} existiert bereits.',
  tenantIsDefault: 'Der Mandant {label} ist der Standardmandant der Datenbank und kann nicht gelöscht werden.',
  tenantNotEmpty: 'Der Mandant {label} kann nicht gelöscht werden: er enthält noch andere Objekte als seine Benutzer.',
  preconditionFailed: 'Das Objekt wurde seit dem Lesen geändert (Version {version}).',
  payloadTooLarge: 'Der Inhalt der Anfrage ist zu groß.',
  unsupportedMediaType: 'Der Inhaltstyp {contentType} wird nicht unterstützt; senden Sie {expected}.',
  tooManyAttempts: 'Zu viele fehlgeschlagene Anmeldeversuche; versuchen Sie es später erneut.',
  tooManyQueries: 'Ihr Mandant führt bereits {limit} Abfragen aus; versuchen Sie es erneut, wenn eine beendet ist.',
  internal: 'Ein unerwarteter Fehler ist aufgetreten.',
  unavailable: 'Der Dienst ist vorübergehend nicht verfügbar.',
  mandatory: 'Die Eigenschaft ist ein Pflichtfeld.',
  unknownProperty: 'Die Eigenschaft ist unbekannt.',
  wrongType: 'Der Wert muss vom Typ {expected} sein.',
  notAllowedValue: 'Der Wert ist nicht erlaubt; erlaubt: {allowed}.',
  invalidFormat: 'Der Wert muss eine gültige {format} sein.',
  tooLong: 'Der Wert ist zu lang (höchstens {limit}).',
  tooShort: 'Der Wert ist zu kurz (mindestens {limit}).',
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
  loginIdTaken: 'Ein anderer Benutzer dieses Mandanten hat diese Anmelde-ID.',
  loginIdOfAnotherTenant: 'Ein Benutzer eines anderen Mandanten hat diese Anmelde-ID; nur ein Systemadministrator darf sie einem Benutzer dieses Mandanten geben.',
  defaultTenantBySystemAdministrator: 'Nur ein Systemadministrator darf ändern, bei welchem Mandanten sich ein Benutzer standardmäßig anmeldet.',
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
