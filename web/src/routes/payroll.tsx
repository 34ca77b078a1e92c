import { Payroll } from '../features/payroll/components/Payroll';

/** « Paie » (accounts holding employee.view_payroll). */
export function PayrollScreen() {
  return <Payroll />;
}
