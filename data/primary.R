# Re-fit the study's primary model from this package alone: the cumulative-logit (ordinal)
# model of the acceptance rating on the plan's distance, with participant random effects,
# by maximum likelihood (ordinal::clmm, Laplace approximation).
#
#   logit P(y_r <= k) = c_k - eta_r
#   eta_r = f(d_r) + beta_s s_r + beta_v v_r + gamma_{arm_r} + u_p + b_p (d_r - mean d)
#
# f is a cubic B-spline with k basis functions on equally spaced knots over [min d, max d]
# (k = min(8, max(4, distinct distances))), the first function dropped and every column
# centred over the data, as in the platform's PyMC model; satisfaction / violation enter
# when they vary, the arm when there are several. What differs from the PyMC model: f is
# unpenalised (PyMC: a random-walk prior on its coefficients), u_p and b_p are correlated
# (PyMC: independent), and these are maximum-likelihood estimates, not posterior means.
#
# Run from the package folder:  Rscript analysis/primary.R
suppressPackageStartupMessages(library(ordinal))

ratings_file <- file.path("data", "@RATINGS_FILE@")
outcome <- "@OUTCOME@"
distance <- "@DISTANCE@"
exclude_impossible <- @EXCLUDE_IMPOSSIBLE@
exclude_failed_attention <- @EXCLUDE_FAILED_ATTENTION@

r <- read.csv(ratings_file, stringsAsFactors = FALSE)
n_read <- nrow(r)
# TRUE / FALSE / empty as written by Python, R or by hand, whatever read.csv made of it
flag <- function(x, value) tolower(trimws(as.character(x))) %in% value
if (exclude_impossible) r <- r[!flag(r$impossible, "true"), ]
if (exclude_failed_attention) {
  failed <- unique(r$participant_id[flag(r$attention_passed, "false")])
  r <- r[!(r$participant_id %in% failed), ]
}
r <- r[!is.na(r[[outcome]]) & !is.na(r[[distance]]), ]
cat(sprintf("%d of %d ratings after the protocol's exclusions, %d participants\n",
            nrow(r), n_read, length(unique(r$participant_id))))

d <- r[[distance]]
k <- min(8, max(4, length(unique(d))))
knots <- seq(min(d), max(d), length.out = k - 2)
basis <- splines::bs(d, knots = knots[-c(1, length(knots))],
                     Boundary.knots = range(d), degree = 3)
basis <- sweep(basis, 2, colMeans(basis))
colnames(basis) <- paste0("f", seq_len(ncol(basis)))

frame <- data.frame(y = factor(r[[outcome]], levels = 1:7, ordered = TRUE),
                    participant = factor(r$participant_id),
                    d_centred = d - mean(d), basis)
frame$y <- droplevels(frame$y)
terms <- colnames(basis)
for (v in c("satisfaction", "violation")) {
  x <- r[[v]]
  x[is.na(x)] <- 0
  if (length(unique(x)) > 1) {
    frame[[v]] <- x
    terms <- c(terms, v)
  }
}
arms <- sort(unique(ifelse(is.na(r$arm) | r$arm == "", "(none)", r$arm)))
if (length(arms) > 1) {
  frame$arm <- factor(ifelse(is.na(r$arm) | r$arm == "", "(none)", r$arm), levels = arms)
  terms <- c(terms, "arm")
}
formula <- as.formula(paste("y ~", paste(terms, collapse = " + "),
                            "+ (1 + d_centred | participant)"))
fit <- clmm(formula, data = frame, nAGQ = 1)

coefs <- coef(summary(fit))
se <- coefs[, "Std. Error"]
effect <- function(name, label) {
  if (name %in% rownames(coefs))
    data.frame(name = label, estimate = coefs[name, "Estimate"], se = se[[name]])
}
rows <- list()
for (v in c("satisfaction", "violation")) rows[[v]] <- effect(v, v)
for (a in arms[-1]) {
  rows[[a]] <- effect(paste0("arm", a), sprintf("arm[%s] - arm[%s]", a, arms[1]))
}
sd_u <- attr(VarCorr(fit)$participant, "stddev")
rows$sigma_u <- data.frame(name = "sigma_u", estimate = sd_u[[1]], se = NA)
rows$sigma_b <- data.frame(name = "sigma_b", estimate = sd_u[[2]], se = NA)
for (j in seq_along(fit$alpha)) {
  rows[[paste0("c", j)]] <- data.frame(name = sprintf("cutpoint[%d]", j),
                                       estimate = fit$alpha[[j]], se = se[[j]])
}
table <- do.call(rbind, rows)
rownames(table) <- NULL
cat(sprintf("clmm: %s ~ f(%s) + ..., %d ratings, logLik %.2f\n",
            outcome, distance, nrow(frame), as.numeric(logLik(fit))))
print(table, digits = 4, row.names = FALSE)
write.csv(table, file.path("analysis", "primary_estimates.csv"), row.names = FALSE)
