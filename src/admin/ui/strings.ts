// Every string the admin page shows, in one catalog: a translation is another catalog of the same
// keys (`lang` and `dir` come with it, for right-to-left scripts).

export const en = {
  lang: "en",
  dir: "ltr" as "ltr" | "rtl",
  signIn: "Sign in",
  signOut: "Sign out",
  signInIntro:
    "Sign in with the credentials your app gives you. The admin can do nothing the API would refuse you.",
  credentialKind: "Credential",
  apiKey: "API key",
  bearer: "Bearer token",
  session: "This browser's session (cookie)",
  secret: "Key or token",
  resources: "Resources",
  findResource: "Find a resource",
  nothingToList: "Your rules let you list no resource.",
  loading: "Loading…",
  search: "Search",
  filters: "Filters",
  field: "Field",
  operator: "Operator",
  value: "Value",
  addFilter: "Add filter",
  removeFilter: (text: string) => `Remove filter ${text}`,
  columns: "Columns",
  newRecord: (name: string) => `New ${name}`,
  previous: "Previous page",
  next: "Next page",
  about: (n: number) => `about ${n.toLocaleString()} rows`,
  exactly: (n: number) => (n === 1 ? "1 row" : `${n.toLocaleString()} rows`),
  noRows: "No rows match.",
  sortBy: (field: string) => `Sort by ${field}`,
  jumpTo: "Jump to value",
  jump: "Go",
  open: (id: string) => `Open ${id}`,
  save: "Save",
  create: "Create",
  saved: "Saved.",
  created: "Created.",
  deleteRecord: "Delete",
  confirmDelete: "Really delete? Press again to confirm.",
  deleted: "Deleted.",
  back: "Back to the list",
  readOnlyForm: "You may not change this record.",
  notAllowed: "Not allowed",
  changedMeanwhile:
    "Someone changed this record since you opened it. Your edits are still in the form; reload to see theirs.",
  reload: "Reload",
  history: "History",
  data: "Data",
  uploads: "Uploads",
  files: "files",
  fileType: "Type",
  allTypes: "All types",
  fileName: "Name",
  size: "Size (bytes)",
  preview: "Preview",
  actions: "Actions",
  download: "Download",
  downloadOf: (name: string) => `Download ${name}`,
  deleteOf: (name: string) => `Delete ${name}`,
  deletedFile: (name: string) => `Deleted ${name}.`,
  uploadFile: "Upload a file",
  uploading: "Uploading",
  removeFile: "Remove the file",
  networkError: "The server could not be reached.",
  bulk: "Selected rows",
  select: (id: string) => `Select ${id}`,
  selectPage: "Select every row on this page",
  selectedCount: (n: number) => `${n} selected`,
  deleteSelected: "Delete selected",
  updateSelected: "Set on selected",
  outcomes: "Outcome per row",
  row: "Row",
  status: "Status",
  message: "Message",
  done: "Done",
  exportCsv: "Export CSV",
  exported: (n: number) => `${n} rows exported`,
  importCsv: "Import CSV",
  header: "Header",
  rowNumber: (n: number) => `Line ${n}`,
  unknownColumns: (names: string) => `Columns that are not fields of a new record: ${names}`,
  missing: (field: string) => `${field} is required.`,
  notANumber: (field: string) => `${field} must be a number.`,
  notABoolean: (field: string) => `${field} must be true or false.`,
  notJson: (field: string) => `${field} must be valid JSON.`,
  notOneOf: (field: string, values: string) => `${field} must be one of ${values}.`,
  searchTarget: (resource: string) => `Search ${resource}`,
  related: (name: string) => `Related: ${name}`,
  chosen: (field: string) => `${field}: chosen`,
  noneChosen: "None chosen.",
  removeChosen: (label: string) => `Remove ${label}`,
  /** Who made a change: a user's id, or the server's own write (no user). */
  by: (user: string | null, source: string) =>
    user === null ? `by the server (${source})` : `by ${user} (${source})`,
  restore: "Restore this version",
  changedBySomeone: "Someone changed this record while you had it open. What you typed is kept.",
  deletedBySomeone: "Someone deleted this record while you had it open.",
  compare: "Compare with their version",
  conflictTitle: "Changed by someone else",
  conflictIntro:
    "Someone saved this record after you opened it. Choose, field by field, which value to keep.",
  original: "When you opened it",
  theirs: "Theirs",
  mine: "Yours",
  choice: "Choice",
  takeTheirs: "Take theirs",
  takeTheirsOf: (field: string) => `Take theirs for ${field}`,
  takeAllTheirs: "Take all of theirs",
  keepMine: "Keep mine",
  newRows: (n: number) => (n === 1 ? "1 new row: show" : `${n} new rows: show`),
  showRequest: "Show request",
  hideRequest: "Hide request",
  invalidJson: "Not valid JSON.",
  yes: "Yes",
  no: "No",
  unset: "(none)",
  theme: "Dark theme",
};

export type Strings = typeof en;

/** Arabic, written right to left: the page mirrors (dir="rtl"), its strings and numbers follow. */
const ar: Strings = {
  lang: "ar",
  dir: "rtl",
  signIn: "تسجيل الدخول",
  signOut: "تسجيل الخروج",
  signInIntro:
    "سجّل الدخول ببيانات الاعتماد التي يمنحك إياها تطبيقك. لا تستطيع لوحة الإدارة فعل أي شيء ترفضه الواجهة البرمجية.",
  credentialKind: "نوع بيانات الاعتماد",
  apiKey: "مفتاح API",
  bearer: "رمز Bearer",
  session: "جلسة هذا المتصفح (ملف تعريف الارتباط)",
  secret: "المفتاح أو الرمز",
  resources: "الموارد",
  findResource: "ابحث عن مورد",
  nothingToList: "لا تسمح لك قواعدك بعرض أي مورد.",
  loading: "جارٍ التحميل…",
  search: "بحث",
  filters: "عوامل التصفية",
  field: "الحقل",
  operator: "العامل",
  value: "القيمة",
  addFilter: "إضافة عامل تصفية",
  removeFilter: (text) => `إزالة عامل التصفية ${text}`,
  columns: "الأعمدة",
  newRecord: (name) => `${name} جديد`,
  previous: "الصفحة السابقة",
  next: "الصفحة التالية",
  about: (n) => `نحو ${arabicRows(n)}`,
  exactly: (n) => arabicRows(n),
  noRows: "لا توجد صفوف مطابقة.",
  sortBy: (field) => `الترتيب حسب ${field}`,
  jumpTo: "الانتقال إلى قيمة",
  jump: "انتقال",
  open: (id) => `فتح ${id}`,
  save: "حفظ",
  create: "إنشاء",
  saved: "تم الحفظ.",
  created: "تم الإنشاء.",
  deleteRecord: "حذف",
  confirmDelete: "هل تريد الحذف فعلًا؟ اضغط مرة أخرى للتأكيد.",
  deleted: "تم الحذف.",
  back: "العودة إلى القائمة",
  readOnlyForm: "لا يمكنك تعديل هذا السجل.",
  notAllowed: "غير مسموح",
  changedMeanwhile: "غيّر شخص ما هذا السجل منذ أن فتحته. ما كتبته ما زال في النموذج.",
  reload: "إعادة التحميل",
  changedBySomeone: "غيّر شخص ما هذا السجل بينما كان مفتوحًا لديك. ما كتبته محفوظ.",
  deletedBySomeone: "حذف شخص ما هذا السجل بينما كان مفتوحًا لديك.",
  compare: "قارن مع نسختهم",
  conflictTitle: "غيّره شخص آخر",
  conflictIntro: "حفظ شخص ما هذا السجل بعد أن فتحته. اختر لكل حقل القيمة التي تريد إبقاءها.",
  original: "عندما فتحته",
  theirs: "نسختهم",
  mine: "نسختك",
  choice: "الاختيار",
  takeTheirs: "خذ نسختهم",
  takeTheirsOf: (field) => `خذ نسختهم للحقل ${field}`,
  takeAllTheirs: "خذ نسختهم كاملة",
  keepMine: "أبقِ نسختي",
  newRows: (n) => `${n.toLocaleString("ar")} صف جديد: عرض`,
  history: "السجل",
  data: "البيانات",
  uploads: "الملفات المرفوعة",
  files: "الملفات",
  fileType: "النوع",
  allTypes: "كل الأنواع",
  fileName: "الاسم",
  size: "الحجم (بايت)",
  preview: "معاينة",
  actions: "إجراءات",
  download: "تنزيل",
  downloadOf: (name) => `تنزيل ${name}`,
  deleteOf: (name) => `حذف ${name}`,
  deletedFile: (name) => `تم حذف ${name}.`,
  uploadFile: "رفع ملف",
  uploading: "جارٍ الرفع",
  removeFile: "إزالة الملف",
  networkError: "تعذّر الوصول إلى الخادم.",
  bulk: "الصفوف المحددة",
  select: (id) => `تحديد ${id}`,
  selectPage: "تحديد كل صفوف هذه الصفحة",
  selectedCount: (n) => `${n.toLocaleString("ar")} محدد`,
  deleteSelected: "حذف المحدد",
  updateSelected: "تعيين على المحدد",
  outcomes: "النتيجة لكل صف",
  row: "الصف",
  status: "الحالة",
  message: "الرسالة",
  done: "تم",
  exportCsv: "تصدير CSV",
  exported: (n) => `تم تصدير ${n.toLocaleString("ar")} صف`,
  importCsv: "استيراد CSV",
  header: "الترويسة",
  rowNumber: (n) => `السطر ${n.toLocaleString("ar")}`,
  unknownColumns: (names) => `أعمدة ليست حقولًا لسجل جديد: ${names}`,
  missing: (field) => `${field} مطلوب.`,
  notANumber: (field) => `يجب أن يكون ${field} رقمًا.`,
  notABoolean: (field) => `يجب أن يكون ${field} true أو false.`,
  notJson: (field) => `يجب أن يكون ${field} JSON صالحًا.`,
  notOneOf: (field, values) => `يجب أن يكون ${field} واحدًا من ${values}.`,
  searchTarget: (resource) => `ابحث في ${resource}`,
  related: (name) => `سجلات مرتبطة: ${name}`,
  chosen: (field) => `${field}: المختارة`,
  noneChosen: "لا شيء مختار.",
  removeChosen: (label) => `إزالة ${label}`,
  by: (user, source) => (user === null ? `بواسطة الخادم (${source})` : `بواسطة ${user} (${source})`),
  restore: "استعادة هذه النسخة",
  showRequest: "عرض الطلب",
  hideRequest: "إخفاء الطلب",
  invalidJson: "ليس JSON صالحًا.",
  yes: "نعم",
  no: "لا",
  unset: "(لا شيء)",
  theme: "المظهر الداكن",
};

const CATALOGS: Readonly<Record<string, Strings>> = { en, ar };

/** The page's strings: chosen once, before the page renders (see `chooseCatalog`). */
export let t: Strings = en;
/**
 * The locale dates are written in: the language the catalog was chosen for (`ar-EG`, the app's
 * `admin: { locale }`), or the browser's own when no catalog matched and the page is in English.
 */
export let locale: string | undefined;

/** The catalog for the first of `languages` there is one for (`ar-EG` → `ar`), else English. */
export function chooseCatalog(languages: readonly string[]): Strings {
  for (const language of languages) {
    const found = CATALOGS[language] ?? CATALOGS[language.split("-")[0]!];
    if (found) {
      t = found;
      locale = language;
      return found;
    }
  }
  t = en;
  locale = undefined;
  return en;
}

const ARABIC_PLURALS = new Intl.PluralRules("ar");

/** A count of rows in Arabic, whose noun takes a different form for 1, 2, 3–10, 11–99 and the rest. */
function arabicRows(n: number): string {
  const digits = n.toLocaleString("ar");
  switch (ARABIC_PLURALS.select(n)) {
    case "one":
      return "صف واحد";
    case "two":
      return "صفان";
    case "few":
      return `${digits} صفوف`;
    case "many":
      return `${digits} صفًا`;
    default:
      return `${digits} صف`;
  }
}
