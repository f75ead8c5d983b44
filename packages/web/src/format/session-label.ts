/**
 * What stands for the test plan of a WebDriver session (API.md §12): a session is an execution of kind
 * `session` with no plan (`test_plan_id: null`), and no app or version when it names no registered app.
 */
export const sessionLabel = "Appium session";
