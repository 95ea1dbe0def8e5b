"""Question templates of the retail store database, and how often each is used.

A template samples values with the Ctx and returns a Spec; framework.make_queries
resamples until the gold SQL returns rows and the failure mode holds.
"""

from __future__ import annotations

from collections import Counter

from .framework import (
    DEEP,
    PARA,
    SIB,
    TITLE,
    Ctx,
    Spec,
    Template,
    country_phrase,
    full_name,
    lit,
    threshold,
    usd,
    who,
)

POSITION_PLURALS = {"Cashier": "cashiers", "Sales Associate": "sales associates",
                    "Stock Clerk": "stock clerks", "Department Lead": "department leads",
                    "Store Manager": "store managers"}


def r_paid_with(c: Ctx) -> Spec:
    method = c.pick("orders")["payment_method"]
    q = c.say("How many orders were paid with {m}?", "Count the orders settled by {m}.",
              m=method.lower())
    return Spec(q, f"SELECT COUNT(*) FROM orders WHERE payment_method = {lit(method)}", "easy")


def r_priciest(c: Ctx) -> Spec:
    n = c.rng.choice([3, 5])
    q = c.say("What are the {n} most expensive products?", "List the top {n} products by price.",
              n=n)
    return Spec(q, f"SELECT name, unit_price FROM products ORDER BY unit_price DESC LIMIT {n}",
                "medium")


def r_low_stock(c: Ctx) -> Spec:
    k = c.rng.choice([5, 10, 15])
    q = c.say("Which products have fewer than {k} units in stock?",
              "List the products with a stock quantity below {k}.", k=k)
    return Spec(q, f"SELECT name, stock_qty FROM products WHERE stock_qty < {k}", "easy")


def r_repeat_customers(c: Ctx) -> Spec:
    counts = Counter(o["customer_id"] for o in c.rows["orders"])
    k = int(threshold(counts.values(), c.rng, (2, 6)))
    q = c.say("Which customers placed more than {k} orders?",
              "List the customers with over {k} orders.", k=k)
    sql = ("SELECT c.first_name, c.last_name, COUNT(*) FROM customers AS c JOIN orders AS o "
           f"ON c.customer_id = o.customer_id GROUP BY c.customer_id HAVING COUNT(*) > {k}")
    return Spec(q, sql, "hard")


def r_tier_towns(c: Ctx) -> Spec:
    t1, t2 = c.rng.sample(["Bronze", "Silver", "Gold"], 2)
    q = c.say("Which cities are home to both {a} and {b} tier customers?",
              "In which cities do we have customers in the {a} tier as well as the {b} tier?",
              a=t1, b=t2)
    sql = (f"SELECT city FROM customers WHERE loyalty_tier = {lit(t1)} INTERSECT "
           f"SELECT city FROM customers WHERE loyalty_tier = {lit(t2)}")
    return Spec(q, sql, "hard")


def r_order_total(c: Ctx) -> Spec:
    order = c.pick("orders", head=True)
    q = c.say("What is the total value of order {o}?", "How much did order {o} come to?",
              o=order["order_id"])
    sql = ("SELECT SUM(oi.quantity * p.unit_price) FROM order_items AS oi JOIN products AS p "
           f"ON oi.product_id = p.product_id WHERE oi.order_id = {order['order_id']}")
    return Spec(q, sql, "medium")


def r_top_department(c: Ctx) -> Spec:
    q = c.say("Which department sold the most units?",
              "Which department moved the largest quantity of items?")
    sql = ("SELECT d.name, SUM(oi.quantity) AS units FROM order_items AS oi "
           "JOIN products AS p ON oi.product_id = p.product_id "
           "JOIN departments AS d ON p.dept_id = d.dept_id "
           "GROUP BY d.dept_id ORDER BY units DESC LIMIT 1")
    return Spec(q, sql, "hard")


def r_never_ordered(c: Ctx) -> Spec:
    q = c.say("Which products have never been ordered?", "List the products nobody has ordered.")
    sql = ("SELECT name FROM products WHERE product_id NOT IN "
           "(SELECT product_id FROM order_items)")
    return Spec(q, sql, "hard")


def r_busy_tills(c: Ctx) -> Spec:
    counts = Counter(o["employee_id"] for o in c.rows["orders"])
    k = int(threshold(counts.values(), c.rng, (2, 5)))
    q = c.say("Which employees rang up more than {k} orders?",
              "Which staff members handled over {k} orders?", k=k)
    sql = ("SELECT e.first_name, e.last_name, COUNT(*) FROM employees AS e JOIN orders AS o "
           f"ON e.employee_id = o.employee_id GROUP BY e.employee_id HAVING COUNT(*) > {k}")
    return Spec(q, sql, "hard")


def r_sib_wage(c: Ctx) -> Spec:
    pos = c.pick("employees")["position"]
    q = c.say("What is the average hourly wage of {p}?",
              "How much do {p} earn per hour on average?", p=POSITION_PLURALS[pos])
    return Spec(q, f"SELECT AVG(hourly_wage) FROM employees WHERE position = {lit(pos)}",
                "easy", SIB)


def r_sib_started(c: Ctx) -> Spec:
    e = c.pick("employees")
    year = int(e["start_date"][:4]) - 1
    q = c.say("How many {p} started on the shop floor after {y}?",
              "How many {p} were taken on at the till or on the floor after {y}?",
              p=POSITION_PLURALS[e["position"]], y=year)
    sql = (f"SELECT COUNT(*) FROM employees WHERE position = {lit(e['position'])} "
           f"AND start_date > '{year}-12-31'")
    return Spec(q, sql, "easy", SIB)


def r_sib_section_staff(c: Ctx) -> Spec:
    e = c.pick("employees")
    dept = c.rows["departments"][e["dept_id"] - 1]
    q = c.say("How many {p} work in the {d} aisle?", "How many {p} staff the {d} section?",
              p=POSITION_PLURALS[e["position"]], d=dept["name"])
    sql = ("SELECT COUNT(*) FROM employees AS e JOIN departments AS d ON e.dept_id = d.dept_id "
           f"WHERE d.name = {lit(dept['name'])} AND e.position = {lit(e['position'])}")
    return Spec(q, sql, "medium", SIB)


def r_sib_shoppers(c: Ctx) -> Spec:
    cust = c.pick("customers")
    q = c.say("How many shoppers from {t} have {tier} loyalty status?",
              "How many {tier}-tier loyalty card shoppers live in {t}?",
              t=cust["city"], tier=cust["loyalty_tier"])
    sql = (f"SELECT COUNT(*) FROM customers WHERE city = {lit(cust['city'])} "
           f"AND loyalty_tier = {lit(cust['loyalty_tier'])}")
    return Spec(q, sql, "easy", SIB)


def r_title_country(c: Ctx) -> Spec:
    country = c.pick("suppliers")["country"]
    q = c.say("Which suppliers are based in {c}?", "List the suppliers located in {c}.",
              c=country_phrase(country))
    return Spec(q, f"SELECT company FROM suppliers WHERE country = {lit(country)}", "easy",
                TITLE, {"decisive": "suppliers"})


def r_title_rating(c: Ctx) -> Spec:
    r = c.rng.choice([4.0, 4.5])
    q = c.say("Which suppliers have a rating of at least {r}?",
              "List the suppliers rated {r} or higher.", r=r)
    return Spec(q, f"SELECT company, rating FROM suppliers WHERE rating >= {r}", "easy", TITLE,
                {"decisive": "suppliers"})


def r_title_products_from(c: Ctx) -> Spec:
    country = c.pick("suppliers")["country"]
    q = c.say("Which products come from suppliers in {c}?",
              "What do we stock from suppliers based in {c}?", c=country_phrase(country))
    sql = ("SELECT p.name FROM products AS p JOIN suppliers AS s ON p.vendor_id = s.vendor_id "
           f"WHERE s.country = {lit(country)}")
    return Spec(q, sql, "medium", TITLE, {"decisive": "suppliers"})


def r_title_dept_suppliers(c: Ctx) -> Spec:
    dept = c.pick("departments")
    q = c.say("Which suppliers provide products to the {d} department?",
              "Who are the suppliers behind the {d} range?", d=dept["name"])
    sql = ("SELECT DISTINCT s.company FROM suppliers AS s JOIN products AS p "
           "ON s.vendor_id = p.vendor_id JOIN departments AS d ON p.dept_id = d.dept_id "
           f"WHERE d.name = {lit(dept['name'])}")
    return Spec(q, sql, "hard", TITLE, {"decisive": "suppliers"})


def r_para_bought(c: Ctx) -> Spec:
    cust = c.pick("customers", head=True)
    q = c.say("What did {n} buy?", "Which things has {n} purchased?", n=full_name(cust))
    sql = ("SELECT DISTINCT p.name FROM customers AS c JOIN orders AS o "
           "ON c.customer_id = o.customer_id JOIN order_items AS oi ON o.order_id = oi.order_id "
           f"JOIN products AS p ON oi.product_id = p.product_id WHERE {who(cust, 'c')}")
    return Spec(q, sql, "hard", PARA)


def r_para_cheap(c: Ctx) -> Spec:
    p = c.rng.choice([4, 5, 8, 10])
    q = c.say("Which goods sell for under {p}?", "What can a shopper get for less than {p}?",
              p=usd(p))
    return Spec(q, f"SELECT name, unit_price FROM products WHERE unit_price < {p}", "easy", PARA)


def r_deep_stock(c: Ctx) -> Spec:
    p, evidence = c.deep("products", "name")
    q = c.say("How many units of {n} are in stock?", "What is the stock level of {n}?",
              n=p["name"])
    return Spec(q, f"SELECT stock_qty FROM products WHERE name = {lit(p['name'])}", "easy",
                DEEP, {"evidence": evidence})


def r_deep_price(c: Ctx) -> Spec:
    p, evidence = c.deep("products", "name")
    q = c.say("What does the {n} cost?", "What is the unit price of the {n}?", n=p["name"])
    return Spec(q, f"SELECT unit_price FROM products WHERE name = {lit(p['name'])}", "easy",
                DEEP, {"evidence": evidence})


def r_deep_order(c: Ctx) -> Spec:
    o, evidence = c.deep("orders", "order_id")
    q = c.say("Who placed order #{o}?", "Which customer is behind order {o}?", o=o["order_id"])
    sql = ("SELECT c.first_name, c.last_name FROM orders AS o JOIN customers AS c "
           f"ON o.customer_id = c.customer_id WHERE o.order_id = {o['order_id']}")
    return Spec(q, sql, "medium", DEEP, {"evidence": evidence})


TEMPLATES: list[tuple[Template, int]] = [
    (r_paid_with, 2), (r_priciest, 1), (r_low_stock, 1), (r_repeat_customers, 1),
    (r_tier_towns, 1), (r_order_total, 2), (r_top_department, 1), (r_never_ordered, 1),
    (r_busy_tills, 1),
    (r_sib_wage, 1), (r_sib_started, 1), (r_sib_section_staff, 2), (r_sib_shoppers, 2),
    (r_title_country, 2), (r_title_rating, 1), (r_title_products_from, 1),
    (r_title_dept_suppliers, 1), (r_para_bought, 2), (r_para_cheap, 2),
    (r_deep_stock, 1), (r_deep_price, 1), (r_deep_order, 2),
]
