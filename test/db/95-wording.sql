-- What people read (issue 29 point 5): « de » elided before a vowel, quantities as the screens
-- write them (« 1 jour », « 1,5 jour », « 2 jours », no « 1.00 »).
begin;
select plan(9);
select is(app_hidden.de_name('Inès Boyer'), 'd’Inès Boyer', 'd’ before a vowel (accented too)');
select is(app_hidden.de_name('Alice Martin'), 'd’Alice Martin', 'd’Alice');
select is(app_hidden.de_name('Yves Martin'), 'd’Yves Martin', 'd’ before a Y sounding as a vowel');
select is(app_hidden.de_name('Yann Le Goff'), 'de Yann Le Goff', 'de before a Y sounding as a consonant');
select is(app_hidden.de_name('Bruno Petit'), 'de Bruno Petit', 'de before a consonant');
select is(app_hidden.quantity_fr(1.00, 'day'), '1 jour', '« 1 jour », not « 1.00 jour »');
select is(app_hidden.quantity_fr(1.50, 'day'), '1,5 jour', 'a decimal comma, the singular below 2');
select is(app_hidden.quantity_fr(11.00, 'day'), '11 jours', 'the plural from 2, trailing zeros only dropped after the comma');
select is(app_hidden.quantity_fr(0.50, 'hour'), '0,5 heure', 'hours alike');
select * from finish();
rollback;
